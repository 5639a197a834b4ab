//===- Plugin.cpp - The overflow check passes as an LLVM pass plugin ------===//
//
// Loaded by `opt -load-pass-plugin=overflow-checks.so`, the passes can be named
// in `-passes=`. Loaded by `rustc -Zllvm-plugins=overflow-checks.so`, they run
// in the default pipeline at the start of the vectorizer's part, as they did
// when rustc added them itself:
//
// - DropBoundedChecksPass and GuardCountersPass at every level but O0, so
//   that the loops that lose their checks vectorize or unroll;
// - then MergeOverflowReportsPass where rustc runs the loop vectorizer, at O2
//   and O3: merging pays only if the loop vectorizes. rustc's
//   `-Cno-vectorize-loops` is not visible here (a plugin cannot read the
//   PassBuilder's tuning options), so with it the loop is merged all the
//   same; merging is allowed whenever the calls are marked.
//
// Under LTO, the passes see the checks of every crate of the module; each
// report call's own mark says whether it may be merged.
//
//===----------------------------------------------------------------------===//

#include "OverflowChecks.h"

#include "llvm/Passes/PassBuilder.h"
#include "llvm/Plugins/PassPlugin.h"

using namespace llvm;
using namespace rustc_overflow;

static void registerCallbacks(PassBuilder &PB) {
  // So that `-print-after=rustc-drop-bounded-checks` and the like find them.
  if (PassInstrumentationCallbacks *PIC =
          PB.getPassInstrumentationCallbacks()) {
    PIC->addClassToPassName(DropBoundedChecksPass::name(),
                            "rustc-drop-bounded-checks");
    PIC->addClassToPassName(GuardCountersPass::name(), "rustc-guard-counters");
    PIC->addClassToPassName(MergeOverflowReportsPass::name(),
                            "rustc-merge-overflow-reports");
  }
  PB.registerPipelineParsingCallback(
      [](StringRef Name, FunctionPassManager &FPM,
         ArrayRef<PassBuilder::PipelineElement>) {
        if (Name == "rustc-drop-bounded-checks")
          FPM.addPass(DropBoundedChecksPass());
        else if (Name == "rustc-guard-counters")
          FPM.addPass(GuardCountersPass());
        else if (Name == "rustc-merge-overflow-reports")
          FPM.addPass(MergeOverflowReportsPass());
        else
          return false;
        return true;
      });
  PB.registerVectorizerStartEPCallback(
      [](FunctionPassManager &FPM, OptimizationLevel Level) {
        if (Level == OptimizationLevel::O0)
          return;
        FPM.addPass(DropBoundedChecksPass());
        FPM.addPass(GuardCountersPass());
        if (Level == OptimizationLevel::O2 || Level == OptimizationLevel::O3)
          FPM.addPass(MergeOverflowReportsPass());
      });
}

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "RustcOverflowChecks", "1",
          registerCallbacks};
}
