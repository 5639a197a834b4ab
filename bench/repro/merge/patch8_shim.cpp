// The pass of rustc patch 8 as an LLVM pass plugin, for opt or `rustc -Zllvm-plugins` (a patched
// rustc's own instance runs only with `-Zmerge-overflow-reports`). Build it with the patched
// tree's `compiler/rustc_llvm/llvm-wrapper` as W:
//   clang++-22 $(llvm-config-22 --cxxflags) -IW -fPIC -shared -O1 patch8_shim.cpp -o mor.so \
//     -L/usr/lib/llvm-22/lib -lLLVM
// MOR_OFF=1 in the environment leaves it out.
#include "MergeOverflowReports.cpp"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Plugins/PassPlugin.h"
extern "C" LLVM_ATTRIBUTE_WEAK ::llvm::PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "mor", "0", [](PassBuilder &PB) {
    PB.registerVectorizerStartEPCallback([](FunctionPassManager &FPM, OptimizationLevel) {
      if (!getenv("MOR_OFF")) LLVMRustAddMergeOverflowReportsPass(FPM);
    });
  }};
}
