//===- Checks.cpp - rustc's integer overflow checks in a loop -------------===//
//
// See Checks.h for the marks by which the passes recognise a check.
//
//===----------------------------------------------------------------------===//

#include "Checks.h"

#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/PatternMatch.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"

using namespace llvm;

namespace rustc_overflow {

bool isReportFn(const Function *F) {
  return F && F->hasFnAttribute("rustc-overflow-report");
}

bool isReportCall(const Instruction &I) {
  auto *CB = dyn_cast<CallBase>(&I);
  return CB && isReportFn(CB->getCalledFunction());
}

bool matchReport(BasicBlock *BB, Loop *L, ReportBlock &Out) {
  if (isa<PHINode>(&BB->front()))
    return false;
  auto *CB = dyn_cast<CallBase>(&*BB->getFirstNonPHIOrDbg());
  if (!CB || !isReportFn(CB->getCalledFunction()))
    return false;
  BasicBlock *C;
  if (auto *II = dyn_cast<InvokeInst>(CB)) {
    C = II->getNormalDest();
  } else {
    auto *Br = dyn_cast<BranchInst>(CB->getNextNode());
    if (!Br || Br->isConditional())
      return false;
    C = Br->getSuccessor(0);
  }
  BasicBlock *P = BB->getSinglePredecessor();
  if (!P || !L->contains(P) || !L->contains(C))
    return false;
  auto *PBr = dyn_cast<BranchInst>(P->getTerminator());
  if (!PBr || !PBr->isConditional())
    return false;
  bool OnTrue;
  if (PBr->getSuccessor(0) == BB && PBr->getSuccessor(1) == C)
    OnTrue = true;
  else if (PBr->getSuccessor(1) == BB && PBr->getSuccessor(0) == C)
    OnTrue = false;
  else
    return false;
  Out = {BB, P, C, CB, OnTrue};
  return true;
}

static bool isOverflowPanicFn(const Function *F) {
  return F && F->hasFnAttribute("rustc-overflow-panic");
}

// Is CB the inline assembly call of `-Zoverflow-report-trap`? rustc marks it;
// any other inline assembly is a user's.
static bool isTrapAsm(const CallBase &CB) {
  return CB.isInlineAsm() && CB.hasFnAttr("rustc-overflow-trap");
}

// The block R runs a trap and goes on to C: it has the branch's P as its only
// predecessor, one trap call, and nothing else that has an effect (the
// template's operands may be widened in it).
static bool isTrapBlock(BasicBlock *R, BasicBlock *P, BasicBlock *C,
                        CallBase *&Asm) {
  auto *Br = dyn_cast<BranchInst>(R->getTerminator());
  if (R->getSinglePredecessor() != P || !Br || Br->isConditional() ||
      Br->getSuccessor(0) != C)
    return false;
  Asm = nullptr;
  for (Instruction &I : *R) {
    auto *CB = dyn_cast<CallBase>(&I);
    if (CB && isTrapAsm(*CB) && !Asm)
      Asm = CB;
    else if (&I != Br && (I.mayHaveSideEffects() || isa<PHINode>(I)))
      return false;
  }
  return Asm;
}

// The branch at the end of P, in L, to where a failed overflow check goes
// (R) or on in the loop (C), in any mode (see Checks.h):
// - report: R calls a report entry point and goes on to C (matchReport);
// - trap: R is P's own block that runs the trap and goes on to C;
// - on: R calls one of the panics; it may be in the loop or not, and be
//   shared by several branches.
// The passes only ever prove that the branch's condition is false and then
// send P straight to C, which is sound for any branch: the list above says
// which branches they look at, so that they look only at a loop's checks.
bool matchCheck(BasicBlock *P, Loop *L, ReportBlock &Out) {
  auto *Br = dyn_cast<BranchInst>(P->getTerminator());
  if (!Br || !Br->isConditional() || !L->contains(P))
    return false;
  for (unsigned I = 0; I < 2; ++I) {
    BasicBlock *R = Br->getSuccessor(I), *C = Br->getSuccessor(1 - I);
    if (R == C || !L->contains(C))
      continue;
    if (matchReport(R, L, Out))
      return Out.P == P;
    CallBase *CB = nullptr;
    if (!isTrapBlock(R, P, C, CB)) {
      // A panic block, or a dedicated exit of the loop that only goes on
      // to one (LoopSimplify's, where the panic block is shared with code
      // outside the loop).
      BasicBlock *Panic = R;
      if (auto *Exit = dyn_cast<BranchInst>(&R->front());
          Exit && Exit->isUnconditional() && R->getSinglePredecessor() == P)
        Panic = Exit->getSuccessor(0);
      CB = dyn_cast<CallBase>(&*Panic->getFirstNonPHIOrDbg());
      if (!CB || !isOverflowPanicFn(CB->getCalledFunction()))
        continue;
    }
    Out = {R, P, C, CB, I == 0};
    return true;
  }
  return false;
}

Instruction *matchCheckedUAdd(const ReportBlock &RB, Value *&X, Value *&Y,
                              WithOverflowInst *&WO) {
  using namespace PatternMatch;
  Value *Cond = cast<BranchInst>(RB.P->getTerminator())->getCondition();
  WO = nullptr;
  if (auto *EV = dyn_cast<ExtractValueInst>(Cond)) {
    WO = dyn_cast<WithOverflowInst>(EV->getAggregateOperand());
    if (!RB.OnTrue || EV->getIndices()[0] != 1 || !WO ||
        WO->getIntrinsicID() != Intrinsic::uadd_with_overflow)
      return nullptr;
    X = WO->getArgOperand(0);
    Y = WO->getArgOperand(1);
    for (User *U : WO->users())
      if (auto *E = dyn_cast<ExtractValueInst>(U))
        if (E->getIndices()[0] == 0)
          return E;
    return nullptr;
  }
  CmpPredicate Pred;
  Value *Sum, *Z;
  if (!match(Cond, m_ICmp(Pred, m_Value(Sum), m_Value(Z))))
    return nullptr;
  if (!RB.OnTrue)
    Pred = CmpInst::getInversePredicate(Pred);
  if (Pred == ICmpInst::ICMP_UGT) {
    std::swap(Sum, Z);
    Pred = ICmpInst::ICMP_ULT;
  }
  if (Pred != ICmpInst::ICMP_ULT ||
      !match(Sum, m_c_Add(m_Value(X), m_Value(Y))) || (Z != X && Z != Y))
    return nullptr;
  return cast<Instruction>(Sum);
}

void dropCheck(const ReportBlock &RB, Instruction *Next, WithOverflowInst *WO,
               SmallVectorImpl<WeakTrackingVH> &Dead) {
  auto *Br = cast<BranchInst>(RB.P->getTerminator());
  Dead.push_back(Br->getCondition());
  RB.R->removePredecessor(RB.P);
  BranchInst::Create(RB.C, Br->getIterator());
  Br->eraseFromParent();
  // A panic block may be shared by other checks.
  if (pred_empty(RB.R))
    DeleteDeadBlock(RB.R);
  if (!Next)
    return;
  if (WO) {
    IRBuilder<> B(WO);
    auto *Sum = cast<Instruction>(
        B.CreateNUWAdd(WO->getArgOperand(0), WO->getArgOperand(1)));
    Sum->takeName(Next);
    Next->replaceAllUsesWith(Sum);
    Dead.push_back(Next);
    Dead.push_back(WO);
  } else {
    Next->setHasNoUnsignedWrap(true);
  }
}

} // namespace rustc_overflow
