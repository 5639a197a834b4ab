//===- Checks.h - rustc's integer overflow checks in a loop -----*- C++ -*-===//
//
// How the passes of this plugin recognise the branches of rustc's integer
// overflow checks, and how they remove one that cannot fail.
//
// A check is a conditional branch `P: br %failed, R, C` (or with R and C the
// other way round) where R is what a failed check does and C where the program
// goes on. rustc marks R in each mode of `-Coverflow-checks`:
//
// - report: R calls one of `core`'s report entry points, which carry the
//   function attribute "rustc-overflow-report", and goes on to C. The report
//   calls of a crate built with `-Zmerge-overflow-reports` also carry the
//   call-site attribute "rustc-merge-overflow-reports";
// - report with `-Zoverflow-report-trap`: R runs the trap, an inline assembly
//   call with the call-site attribute "rustc-overflow-trap", and goes on to C;
// - on: R calls one of `core`'s overflow panics, which carry the function
//   attribute "rustc-overflow-panic".
//
// Nothing else is a check. A branch to a user's inline assembly, or to a panic
// that rustc did not mark (the `.expect()` of a `checked_add`), is code like
// any other, and code built with `-Coverflow-checks=off` has no checks.
//
//===----------------------------------------------------------------------===//

#ifndef RUSTC_OVERFLOW_CHECKS_CHECKS_H
#define RUSTC_OVERFLOW_CHECKS_CHECKS_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/ValueHandle.h"

namespace llvm {
class BasicBlock;
class CallBase;
class Function;
class Instruction;
class Loop;
class Value;
class WithOverflowInst;
} // namespace llvm

namespace rustc_overflow {

/// Is F one of `core`'s report entry points?
bool isReportFn(const llvm::Function *F);

/// Is I a call of a report entry point?
bool isReportCall(const llvm::Instruction &I);

/// One check: `P: br %cond, R, C` and R, the block a failed check goes to. For
/// a report, R is `call @report(...); br C` (or `invoke ... to C`) and Call is
/// the report call; for a trap, Call is the inline assembly call in R; for a
/// panic, R is the panic block (or a dedicated exit of the loop that goes on
/// to it) and Call the panic call.
struct ReportBlock {
  llvm::BasicBlock *R;
  llvm::BasicBlock *P;
  llvm::BasicBlock *C;
  llvm::CallBase *Call;
  bool OnTrue; // P branches to R when its condition is true
};

/// Is BB a report block of a check in L, with its predecessor and
/// continuation in L?
bool matchReport(llvm::BasicBlock *BB, llvm::Loop *L, ReportBlock &Out);

/// Does P, a block of L, end with a check in any mode, whose continuation is
/// in L?
bool matchCheck(llvm::BasicBlock *P, llvm::Loop *L, ReportBlock &Out);

/// The unsigned add `X + Y` that RB's check guards: `uadd.with.overflow(X, Y)`
/// (then WO), or as InstCombine leaves it, `X + Y < X` (or `< Y`) either way
/// round. Returns the sum, the intrinsic's first result or the add, or null.
llvm::Instruction *matchCheckedUAdd(const ReportBlock &RB, llvm::Value *&X,
                                    llvm::Value *&Y,
                                    llvm::WithOverflowInst *&WO);

/// Removes the branch to R of a check that cannot fail, and R if nothing else
/// goes there: P goes straight on to C, and the checked unsigned add `Next` (an
/// add, or the first result of WO; null if the check is not of one), which
/// does not wrap, becomes an `add nuw`. The dead condition and intrinsic are
/// left in Dead.
void dropCheck(const ReportBlock &RB, llvm::Instruction *Next,
               llvm::WithOverflowInst *WO,
               llvm::SmallVectorImpl<llvm::WeakTrackingVH> &Dead);

} // namespace rustc_overflow

#endif // RUSTC_OVERFLOW_CHECKS_CHECKS_H
