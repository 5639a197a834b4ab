//===- OverflowChecks.h - Passes over rustc's overflow checks ---*- C++ -*-===//
//
// Three function passes over the integer overflow checks that rustc generates
// (see Checks.h for how they recognise one). The first two only remove checks
// that cannot fail, GuardCountersPass in a copy of the loop that runs when
// they cannot; the third delays a loop's reports to its exits, as
// `-Zmerge-overflow-reports` allows.
//
//===----------------------------------------------------------------------===//

#ifndef RUSTC_OVERFLOW_CHECKS_OVERFLOWCHECKS_H
#define RUSTC_OVERFLOW_CHECKS_OVERFLOWCHECKS_H

#include "llvm/IR/PassManager.h"

namespace rustc_overflow {

/// Removes the checks of a loop of bounded length that cannot fail in any run
/// of it, in every mode (DropBoundedChecks.cpp).
struct DropBoundedChecksPass : llvm::PassInfoMixin<DropBoundedChecksPass> {
  llvm::PreservedAnalyses run(llvm::Function &F,
                              llvm::FunctionAnalysisManager &AM);
};

/// Versions a loop whose only checks are counters in one array: a copy without
/// the checks runs when the largest counter leaves room for every add the loop
/// can make, in every mode (GuardCounters.cpp).
struct GuardCountersPass : llvm::PassInfoMixin<GuardCountersPass> {
  llvm::PreservedAnalyses run(llvm::Function &F,
                              llvm::FunctionAnalysisManager &AM);
};

/// Merges the report calls of an innermost loop into one per check site, made
/// at the loop's exits, where rustc marked the calls as mergeable
/// (MergeOverflowReports.cpp).
struct MergeOverflowReportsPass
    : llvm::PassInfoMixin<MergeOverflowReportsPass> {
  llvm::PreservedAnalyses run(llvm::Function &F,
                              llvm::FunctionAnalysisManager &AM);
};

} // namespace rustc_overflow

#endif // RUSTC_OVERFLOW_CHECKS_OVERFLOWCHECKS_H
