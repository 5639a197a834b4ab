//===- MergeOverflowReports.cpp - Merge a loop's overflow reports ---------===//
//
// Merge the overflow reports of `-Coverflow-checks=report` inside a loop into
// one report per check site, made when the loop is left.
//
// A failed check in report mode calls one of `core`'s report entry points
// (functions with the "rustc-overflow-report" attribute) from a cold block and
// continues with the wrapped value. Every iteration of a checked loop therefore
// branches on its overflow flag, and LLVM cannot vectorize the loop. Report
// mode computes the same values whether a check fails or not: only the call is
// observable. The unstable book's page of `-Coverflow-checks=report` says when
// that call may be made later and stand for several overflows of one site;
// this pass implements that rule for innermost loops. It merges only report
// calls with the "rustc-merge-overflow-reports" attribute, which rustc gives
// the report calls of a crate built with `-Zmerge-overflow-reports`: a
// handler that does not return (`core`'s default panics) then stops the
// program after the loop instead of in it. The mark on the call, not the flag
// of the crate that runs the pass, decides, so that under LTO each crate's
// reports keep their crate's choice wherever they are inlined. It looks at
// innermost loops where:
//
// - the loop has a computable maximum trip count, calls nothing but functions
//   that neither access memory, unwind nor fail to return, has no volatile
//   or atomic access, fence, inline assembly or EH pad (the report blocks
//   excepted), loads nothing that a report call may write, and has no
//   `*.with.overflow` intrinsic that the vectorizer could not widen once
//   expanded (a multiplication wider than 32 bits, a vector one); a
//   report's landing pad takes no value of the loop;
// - every site in the loop has one report block, whose check runs in every
//   iteration that completes (its block dominates the latch), and whose check
//   and operands depend only on affine induction variables, loop invariants,
//   loads of memory no instruction of the loop may write and, for an
//   unsigned accumulator `s += v` in a loop left only from its latch, `s`.
//
// Then each report block becomes `pending |= overflowed` for its site, and each
// exit edge of the loop (normal exits, early exits, edges to a panic) gets, for
// each pending site, a cold rescan that re-runs that site's check from the
// first iteration until it fails, and then, in the order of the sites in the
// loop, one report call with the operands of the first overflow. The rescan is
// bounded: every iteration before the one that set the flag completed, so ran
// the check on the same operands; the first failing iteration of the rescan is
// the first overflow, which the loop did run. An accumulator's check leaves
// the loop altogether, so that `s` stays a reduction: at the exit, the site is
// pending if `s` ended below its start, or if the run was too long for that
// to tell (see matchAccumulator) and the sum computed again in twice its
// bits says so, and then its rescan stops after the run's number of
// iterations.
//
// A loop where any site does not qualify is left alone: keeping the first
// overflow's operands in the loop (a select per iteration) would keep it from
// vectorizing, and then merging only adds cost. For the same reason nothing is
// merged for a target without vector registers. The pass runs right before the
// loop vectorizer; the `*.with.overflow` intrinsics of a merged loop become
// plain arithmetic and compares, which the vectorizer can widen.
//
//===----------------------------------------------------------------------===//

#include "Checks.h"
#include "OverflowChecks.h"

#include "llvm/Analysis/AliasAnalysis.h"
#include "llvm/Analysis/AssumptionCache.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/LoopIterator.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/ScalarEvolutionExpressions.h"
#include "llvm/Analysis/TargetTransformInfo.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/Local.h"
#include "llvm/Transforms/Utils/LoopSimplify.h"
#include "llvm/Transforms/Utils/LoopUtils.h"
#include "llvm/Transforms/Utils/PromoteMemToReg.h"
#include "llvm/Transforms/Utils/ScalarEvolutionExpander.h"
#include "llvm/Transforms/Utils/ValueMapper.h"

using namespace llvm;
using namespace rustc_overflow;

namespace {

// A report call that rustc marked as one the pass may merge.
bool isMergeable(const CallBase &CB) {
  return isReportFn(CB.getCalledFunction()) &&
         CB.getAttributes().hasFnAttr("rustc-merge-overflow-reports");
}

// What the exits of the loop need to re-run and report a site.
struct Site {
  ReportBlock RB;
  AllocaInst *Flag = nullptr;
  // The check's and the operands' backward slice inside the loop, in program
  // order, and the induction phis it starts from: phi, start, step.
  SmallVector<Instruction *, 8> Slice;
  SmallVector<std::tuple<PHINode *, Value *, Value *>, 2> IVs;
  // Landing-pad phis of an `invoke`d report: the value each takes from R.
  SmallVector<std::pair<PHINode *, Value *>, 2> LpadPhis;
  // An accumulator site, `s = s + v` (see matchAccumulator): the phi `s`, its
  // value after the add, and the number of iterations up to which the final
  // `s` tells whether an add overflowed.
  PHINode *Acc = nullptr;
  Value *AccStart = nullptr;
  Instruction *AccNext = nullptr;
  APInt AccLimit;
  // The addend `v` and its backward slice in the loop, in program order.
  Value *AccAddend = nullptr;
  SmallVector<Instruction *, 4> AddendSlice;
};

struct Plan {
  Loop *L;
  // The latch's exit count, for loops with accumulator sites, and its value
  // (expanded in the preheader).
  const SCEV *ExitCount = nullptr;
  Value *Bound = nullptr;
  SmallVector<Site, 4> Sites;
  SmallVector<std::pair<BasicBlock *, BasicBlock *>, 4> Exits;
  SmallVector<WithOverflowInst *, 4> WithOverflow;
};

// Can the site's check be re-run from the first iteration after the loop?
bool planRescan(Site &S, Loop *L, LoopInfo &LI, ScalarEvolution &SE,
                AAResults &AA, DominatorTree &DT,
                ArrayRef<Instruction *> Writers) {
  const ReportBlock &RB = S.RB;
  BasicBlock *Latch = L->getLoopLatch();
  // Every completed iteration ran the check (see the top of the file).
  if (!Latch || !DT.dominates(RB.P, Latch))
    return false;
  SmallPtrSet<Instruction *, 16> In;
  SmallVector<Instruction *, 16> Work;
  auto Add = [&](Value *V) {
    if (auto *I = dyn_cast<Instruction>(V))
      if (L->contains(I) && In.insert(I).second)
        Work.push_back(I);
  };
  Add(cast<BranchInst>(RB.P->getTerminator())->getCondition());
  for (Value *V : RB.Call->args())
    Add(V);
  if (S.Acc)
    Add(S.AccNext);
  while (!Work.empty()) {
    Instruction *I = Work.pop_back_val();
    if (auto *Phi = dyn_cast<PHINode>(I)) {
      if (Phi == S.Acc)
        continue; // becomes a phi of the rescan loop, fed by AccNext
      if (Phi->getParent() != L->getHeader())
        return false;
      auto *AR = dyn_cast<SCEVAddRecExpr>(SE.getSCEV(Phi));
      if (!AR || AR->getLoop() != L || !AR->isAffine())
        return false;
      const SCEV *Step = AR->getStepRecurrence(SE);
      Value *StepV = nullptr;
      if (auto *C = dyn_cast<SCEVConstant>(Step))
        StepV = C->getValue();
      else if (auto *U = dyn_cast<SCEVUnknown>(Step))
        StepV = U->getValue();
      if (!StepV)
        return false;
      if (auto *SI = dyn_cast<Instruction>(StepV))
        if (!DT.dominates(SI, L->getHeader()))
          return false;
      S.IVs.push_back(
          {Phi, Phi->getIncomingValueForBlock(L->getLoopPreheader()), StepV});
      continue; // becomes a phi of the rescan loop
    }
    if (auto *Ld = dyn_cast<LoadInst>(I)) {
      if (!Ld->isSimple())
        return false;
      MemoryLocation Loc =
          MemoryLocation::getBeforeOrAfter(Ld->getPointerOperand());
      for (Instruction *W : Writers)
        if (isModSet(AA.getModRefInfo(W, Loc)))
          return false;
    } else if (auto *CB = dyn_cast<CallBase>(I)) {
      if (!isa<IntrinsicInst>(CB) || !CB->doesNotAccessMemory() ||
          !CB->willReturn())
        return false;
    } else if (isa<AllocaInst>(I) || isa<FreezeInst>(I) ||
               I->mayHaveSideEffects() || I->mayReadOrWriteMemory() ||
               I->isEHPad()) {
      // A cloned `freeze` may choose another value in the rescan.
      return false;
    }
    for (Value *Op : I->operands()) {
      // So may an `undef` operand.
      if (isa<UndefValue>(Op) && !isa<PoisonValue>(Op))
        return false;
      Add(Op);
    }
  }
  LoopBlocksRPO RPO(L);
  RPO.perform(&LI);
  for (BasicBlock *BB : RPO)
    for (Instruction &I : *BB)
      if (In.count(&I) && !isa<PHINode>(I))
        S.Slice.push_back(&I);
  if (S.Acc) {
    // The addend's part of the slice, for emitWideSum.
    SmallPtrSet<Value *, 8> Need = {S.AccAddend};
    for (Instruction *I : reverse(S.Slice))
      if (Need.count(I))
        Need.insert(I->op_begin(), I->op_end());
    for (Instruction *I : S.Slice)
      if (Need.count(I))
        S.AddendSlice.push_back(I);
  }
  return true;
}

bool harmlessIntrinsic(const CallBase &CB) {
  if (auto *II = dyn_cast<IntrinsicInst>(&CB)) {
    switch (II->getIntrinsicID()) {
    case Intrinsic::assume:
    case Intrinsic::lifetime_start:
    case Intrinsic::lifetime_end:
    case Intrinsic::experimental_noalias_scope_decl:
    case Intrinsic::pseudoprobe:
      return true;
    default:
      break;
    }
  }
  return false;
}

// Can expandWithOverflow below replace it? Not a vector operation, nor a
// multiplication wider than 32 bits, whose widened product would need lanes
// of more than 64 bits.
bool canExpand(const WithOverflowInst *II) {
  auto *Ty = dyn_cast<IntegerType>(II->getLHS()->getType());
  if (!Ty)
    return false;
  switch (II->getIntrinsicID()) {
  case Intrinsic::uadd_with_overflow:
  case Intrinsic::usub_with_overflow:
  case Intrinsic::sadd_with_overflow:
  case Intrinsic::ssub_with_overflow:
    return true;
  case Intrinsic::umul_with_overflow:
  case Intrinsic::smul_with_overflow:
    return Ty->getBitWidth() <= 32;
  default:
    return false;
  }
}

// An accumulator is taken only if the final value of its sum tells whether an
// add overflowed for runs of at least this many iterations (see
// matchAccumulator); after a longer run, the exit sums again (emitWideSum).
constexpr uint64_t MinAccumulatorLimit = 1 << 16;

// An unsigned accumulator: the site checks the unsigned add `s + v`, where `s`
// is a header phi whose value from the latch is that add's result, and the
// loop's only exit is its latch. The check is `uadd.with.overflow(s, v)` or,
// as InstCombine leaves it, `s + v < s` (or `< v`). Then the loop need not
// track the site: the wrapped adds of one run of n iterations add up to at
// most n * max(v), so if that is below 2^bits, `s` wrapped at most once, and
// did iff its final value is below its start. After a longer run, the exit
// sums the addends again in twice the bits (emitWideSum), and if that says `s`
// wrapped, the bounded rescan finds the first overflow. The check and its flag
// leave the loop, and `s` stays a reduction that the vectorizer accepts.
bool matchAccumulator(Site &S, Loop *L, DominatorTree &DT,
                      AssumptionCache &AC) {
  Value *Cond = cast<BranchInst>(S.RB.P->getTerminator())->getCondition();
  BasicBlock *Latch = L->getLoopLatch();
  Value *Phi0, *Phi1;
  WithOverflowInst *WO;
  Instruction *Next = matchCheckedUAdd(S.RB, Phi0, Phi1, WO);
  if (WO && (!canExpand(WO) || !L->contains(WO)))
    return false;
  if (!Next || !L->contains(Next))
    return false;
  for (unsigned I = 0; I < 2; ++I) {
    auto *Phi = dyn_cast<PHINode>(I == 0 ? Phi0 : Phi1);
    Value *V = I == 0 ? Phi1 : Phi0;
    if (!Phi || Phi->getParent() != L->getHeader() ||
        Phi->getNumIncomingValues() != 2 ||
        Phi->getIncomingValueForBlock(Latch) != Next || V == Phi)
      continue;
    // `s` changes only by this add, and the loop uses it only there and in
    // the check.
    if (any_of(Phi->users(), [&](User *U) {
          auto *UI = cast<Instruction>(U);
          return L->contains(UI) && UI != Cond && UI != Next &&
                 !(isa<WithOverflowInst>(UI) && Next->getOperand(0) == UI) &&
                 UI->getParent() != S.RB.R;
        }))
      continue;
    KnownBits Known =
        computeKnownBits(V, Next->getDataLayout(), &AC, Next, &DT);
    APInt Max = Known.getMaxValue();
    if (Max.isZero())
      continue;
    APInt Limit = APInt::getMaxValue(Max.getBitWidth()).udiv(Max);
    if (Limit.ult(MinAccumulatorLimit))
      continue;
    // A run longer than that is checked again in twice the bits, if that is
    // at most 64 (see emitWideSum); a wider sum is taken only if such a run
    // is out of reach.
    if (Max.getBitWidth() > 32 && Limit.ult(uint64_t(1) << 32))
      continue;
    S.Acc = Phi;
    S.AccAddend = V;
    S.AccStart = Phi->getIncomingValueForBlock(L->getLoopPreheader());
    S.AccNext = Next;
    S.AccLimit = Limit;
    return true;
  }
  return false;
}

bool analyse(Loop *L, LoopInfo &LI, ScalarEvolution &SE, AAResults &AA,
             DominatorTree &DT, AssumptionCache &AC, Plan &Pl) {
  Pl.L = L;
  if (!L->getLoopPreheader() || !L->getLoopLatch())
    return false;
  // A report delayed to an exit that never comes would be lost.
  if (isa<SCEVCouldNotCompute>(SE.getSymbolicMaxBackedgeTakenCount(L)))
    return false;
  // The sites, in the program order of their report blocks.
  LoopBlocksRPO RPO(L);
  RPO.perform(&LI);
  SmallPtrSet<BasicBlock *, 8> ReportBBs;
  for (BasicBlock *BB : RPO) {
    Site S;
    if (!matchReport(BB, L, S.RB))
      continue;
    // A report of a crate that did not ask for merging stays in place.
    if (!isMergeable(*S.RB.Call))
      return false;
    // The program continues with the same values whether it reported or not.
    for (PHINode &Phi : S.RB.C->phis())
      if (Phi.getIncomingValueForBlock(S.RB.P) !=
          Phi.getIncomingValueForBlock(BB))
        return false;
    if (auto *II = dyn_cast<InvokeInst>(S.RB.Call)) {
      BasicBlock *U = II->getUnwindDest();
      if (L->contains(U))
        return false;
      for (PHINode &Phi : U->phis()) {
        Value *V = Phi.getIncomingValueForBlock(BB);
        if (auto *I = dyn_cast<Instruction>(V))
          if (L->contains(I))
            return false;
        S.LpadPhis.push_back({&Phi, V});
      }
    }
    Pl.Sites.push_back(S);
    ReportBBs.insert(BB);
  }
  if (Pl.Sites.empty())
    return false;
  // Nothing in the loop can observe when the handler runs.
  for (BasicBlock *BB : L->blocks()) {
    if (ReportBBs.count(BB))
      continue;
    for (Instruction &I : *BB) {
      if (auto *CB = dyn_cast<CallBase>(&I)) {
        if (CB->isInlineAsm() || isa<InvokeInst>(CB) || isa<CallBrInst>(CB))
          return false;
        if (isReportFn(CB->getCalledFunction()))
          return false; // a report call outside a recognized report block
        if (auto *WO = dyn_cast<WithOverflowInst>(CB)) {
          // The vectorizer cannot widen one that stays: then merging would
          // only add the rescans.
          if (!canExpand(WO))
            return false;
          Pl.WithOverflow.push_back(WO);
        }
        if (harmlessIntrinsic(*CB))
          continue;
        if (!CB->doesNotAccessMemory() || !CB->doesNotThrow() ||
            !CB->willReturn())
          return false;
      } else if (auto *Ld = dyn_cast<LoadInst>(&I)) {
        if (!Ld->isSimple())
          return false;
        // The handler may write memory the loop reads: then the iterations
        // after an overflow would read what it wrote.
        for (const Site &S : Pl.Sites)
          if (isModSet(AA.getModRefInfo(S.RB.Call, MemoryLocation::get(Ld))))
            return false;
      } else if (auto *St = dyn_cast<StoreInst>(&I)) {
        if (!St->isSimple())
          return false;
      } else if (isa<FenceInst>(I) || isa<AtomicRMWInst>(I) ||
                 isa<AtomicCmpXchgInst>(I) || I.isEHPad()) {
        return false;
      }
    }
  }
  // Every exit edge; only a report's own unwind edge may lead to an EH pad.
  for (BasicBlock *BB : L->blocks()) {
    for (BasicBlock *Succ : successors(BB)) {
      if (L->contains(Succ))
        continue;
      if (ReportBBs.count(BB)) {
        auto *II = dyn_cast<InvokeInst>(BB->getTerminator());
        if (II && II->getUnwindDest() == Succ)
          continue; // goes away with the report block
        return false;
      }
      if (Succ->isEHPad() || (!isa<BranchInst>(BB->getTerminator()) &&
                              !isa<SwitchInst>(BB->getTerminator())))
        return false;
      if (!is_contained(Pl.Exits, std::make_pair(BB, Succ)))
        Pl.Exits.push_back({BB, Succ});
    }
  }
  // What the loop writes, the report calls aside: a rescan may load nothing
  // of it.
  SmallVector<Instruction *, 8> Writers;
  for (BasicBlock *BB : L->blocks())
    if (!ReportBBs.count(BB))
      for (Instruction &I : *BB)
        if (I.mayWriteToMemory())
          Writers.push_back(&I);
  // Accumulator sites need the number of iterations of a run, so a loop that
  // is left only from its latch.
  BasicBlock *Latch = L->getLoopLatch();
  if (all_of(Pl.Exits, [&](auto &E) { return E.first == Latch; })) {
    const SCEV *EC = SE.getExitCount(L, Latch);
    SCEVExpander Exp(SE, "ovf.count");
    if (!isa<SCEVCouldNotCompute>(EC) && EC->getType()->isIntegerTy() &&
        Exp.isSafeToExpandAt(EC, L->getLoopPreheader()->getTerminator())) {
      for (Site &S : Pl.Sites)
        if (matchAccumulator(S, L, DT, AC))
          Pl.ExitCount = EC;
    }
  }
  for (Site &S : Pl.Sites)
    if (!planRescan(S, L, LI, SE, AA, DT, Writers))
      return false;
  return true;
}

// Replace `{s,u}{add,sub,mul}.with.overflow` by plain arithmetic and a
// compare: the loop vectorizer cannot widen the struct-returning intrinsics.
// Returns the overflow flag.
Value *expandWithOverflow(WithOverflowInst *II) {
  assert(canExpand(II));
  IRBuilder<> B(II);
  Value *A = II->getLHS(), *Bv = II->getRHS();
  auto *Ty = cast<IntegerType>(A->getType());
  Value *Zero = ConstantInt::get(Ty, 0);
  Value *R, *Ov;
  switch (II->getIntrinsicID()) {
  case Intrinsic::uadd_with_overflow:
    R = B.CreateAdd(A, Bv);
    Ov = B.CreateICmpULT(R, A);
    break;
  case Intrinsic::usub_with_overflow:
    R = B.CreateSub(A, Bv);
    Ov = B.CreateICmpULT(A, Bv);
    break;
  case Intrinsic::sadd_with_overflow:
    R = B.CreateAdd(A, Bv);
    Ov = B.CreateICmpSLT(B.CreateAnd(B.CreateXor(A, R), B.CreateXor(Bv, R)),
                         Zero);
    break;
  case Intrinsic::ssub_with_overflow:
    R = B.CreateSub(A, Bv);
    Ov = B.CreateICmpSLT(B.CreateAnd(B.CreateXor(A, Bv), B.CreateXor(A, R)),
                         Zero);
    break;
  case Intrinsic::umul_with_overflow:
  case Intrinsic::smul_with_overflow: {
    bool Signed = II->isSigned();
    Type *W = IntegerType::get(II->getContext(), Ty->getBitWidth() * 2);
    Value *P = Signed ? B.CreateMul(B.CreateSExt(A, W), B.CreateSExt(Bv, W))
                      : B.CreateMul(B.CreateZExt(A, W), B.CreateZExt(Bv, W));
    R = B.CreateTrunc(P, Ty);
    Ov = B.CreateICmpNE(Signed ? B.CreateSExt(R, W) : B.CreateZExt(R, W), P);
    break;
  }
  default:
    llvm_unreachable("not a with.overflow intrinsic canExpand accepts");
  }
  for (User *U : make_early_inc_range(II->users()))
    if (auto *EV = dyn_cast<ExtractValueInst>(U)) {
      EV->replaceAllUsesWith(EV->getIndices()[0] == 0 ? R : Ov);
      EV->eraseFromParent();
    }
  if (!II->use_empty()) {
    Value *Agg = B.CreateInsertValue(PoisonValue::get(II->getType()), R, 0);
    II->replaceAllUsesWith(B.CreateInsertValue(Agg, Ov, 1));
  }
  II->eraseFromParent();
  return Ov;
}

// Put a new block on the edge From->To and return it.
BasicBlock *splitExit(BasicBlock *From, BasicBlock *To) {
  BasicBlock *N = BasicBlock::Create(
      From->getContext(), To->getName() + ".report", To->getParent(), To);
  BranchInst::Create(To, N);
  Instruction *T = From->getTerminator();
  for (unsigned I = 0; I < T->getNumSuccessors(); ++I)
    if (T->getSuccessor(I) == To)
      T->setSuccessor(I, N);
  for (PHINode &Phi : To->phis()) {
    Value *V = Phi.getIncomingValueForBlock(From);
    while (Phi.getBasicBlockIndex(From) >= 0)
      Phi.removeIncomingValue(From, /*DeletePHIIfEmpty=*/false);
    Phi.addIncoming(V, N);
  }
  return N;
}

// A copy of the loop for a site, after it (see emitRescan and emitWideSum):
// the induction phis in Hdr, entered from Pre with their starts, and the
// instructions of Slice cloned at the end of Hdr.
struct LoopCopy {
  ValueToValueMapTy VM;
  SmallVector<std::pair<PHINode *, Value *>, 2> IVs; // phi, step

  LoopCopy(Site &S, BasicBlock *Hdr, BasicBlock *Pre, const Twine &Suffix) {
    IRBuilder<> B(Hdr);
    for (auto &[Phi, Start, Step] : S.IVs) {
      PHINode *P = B.CreatePHI(Phi->getType(), 2, Phi->getName() + Suffix);
      P->addIncoming(Start, Pre);
      VM[Phi] = P;
      IVs.push_back({P, Step});
    }
  }

  void clone(ArrayRef<Instruction *> Slice, BasicBlock *Hdr) {
    for (Instruction *I : Slice) {
      Instruction *C = I->clone();
      C->insertInto(Hdr, Hdr->end());
      RemapInstruction(C, VM, RF_IgnoreMissingLocals | RF_NoModuleLevelChanges);
      // The loop's noalias scopes do not hold outside it.
      C->setMetadata(LLVMContext::MD_alias_scope, nullptr);
      C->setMetadata(LLVMContext::MD_noalias, nullptr);
      VM[I] = C;
    }
  }

  Value *map(Value *V) {
    auto It = VM.find(V);
    return It == VM.end() ? V : (Value *)It->second;
  }

  // The induction phis' values in the next iteration, from Latch.
  void step(IRBuilder<> &B, BasicBlock *Latch) {
    for (auto &[P, Step] : IVs)
      P->addIncoming(P->getType()->isPointerTy() ? B.CreatePtrAdd(P, Step)
                                                 : B.CreateAdd(P, Step),
                     Latch);
  }
};

// At the end of N: if the site is pending, re-run its check from the first
// iteration until it fails. Returns the block to continue in, and the
// operands of the first overflow in Args (for the site's non-constant ones).
// An accumulator site's rescan stops after Bound + 1 iterations (the run's
// number): its flag may be set without an overflow, which it then clears.
BasicBlock *emitRescan(Site &S, BasicBlock *N, Function &F, Value *Bound,
                       SmallVectorImpl<Value *> &Args) {
  LLVMContext &Ctx = F.getContext();
  MDBuilder MDB(Ctx);
  IRBuilder<> B(N->getTerminator());
  Value *Pending = B.CreateLoad(B.getInt1Ty(), S.Flag, "ovf.pending");
  Instruction *ThenTerm =
      SplitBlockAndInsertIfThen(Pending, N->getTerminator()->getIterator(),
                                false, MDB.createUnlikelyBranchWeights());
  BasicBlock *Then = ThenTerm->getParent();
  BasicBlock *Tail = ThenTerm->getSuccessor(0);
  BasicBlock *Hdr = BasicBlock::Create(Ctx, "ovf.rescan", &F, Tail);
  BasicBlock *Next = BasicBlock::Create(Ctx, "ovf.rescan.next", &F, Tail);
  BasicBlock *Found = BasicBlock::Create(Ctx, "ovf.rescan.found", &F, Tail);
  ThenTerm->setSuccessor(0, Hdr);
  LoopCopy LC(S, Hdr, Then, ".rescan");
  IRBuilder<> HB(Hdr);
  PHINode *Acc = nullptr, *Count = nullptr;
  if (S.Acc) {
    Acc = HB.CreatePHI(S.Acc->getType(), 2, S.Acc->getName() + ".rescan");
    Acc->addIncoming(S.AccStart, Then);
    LC.VM[S.Acc] = Acc;
    Count = HB.CreatePHI(Bound->getType(), 2, "ovf.rescan.count");
    Count->addIncoming(ConstantInt::get(Bound->getType(), 0), Then);
  }
  LC.clone(S.Slice, Hdr);
  auto Map = [&](Value *V) { return LC.map(V); };
  Value *Fail = Map(cast<BranchInst>(S.RB.P->getTerminator())->getCondition());
  if (!S.RB.OnTrue)
    Fail = HB.CreateNot(Fail);
  BasicBlock *NotFound = nullptr;
  if (Count) {
    // No overflow in the Bound + 1 iterations of the run: nothing to report.
    BasicBlock *More = BasicBlock::Create(Ctx, "ovf.rescan.more", &F, Next);
    NotFound = BasicBlock::Create(Ctx, "ovf.rescan.none", &F, Tail);
    HB.CreateCondBr(Fail, Found, More);
    IRBuilder<> MB(More);
    MB.CreateCondBr(MB.CreateICmpEQ(Count, Bound), NotFound, Next);
    IRBuilder<> FB(NotFound);
    FB.CreateStore(FB.getFalse(), S.Flag);
    FB.CreateBr(Tail);
  } else {
    HB.CreateCondBr(Fail, Found, Next);
  }
  IRBuilder<> NB(Next);
  LC.step(NB, Next);
  if (Acc) {
    Acc->addIncoming(Map(S.AccNext), Next);
    Count->addIncoming(
        NB.CreateAdd(Count, ConstantInt::get(Count->getType(), 1)), Next);
  }
  NB.CreateBr(Hdr);
  BranchInst::Create(Tail, Found);
  IRBuilder<> TB(&*Tail->getFirstInsertionPt());
  for (Value *A : S.RB.Call->args()) {
    if (isa<Constant>(A)) {
      Args.push_back(A);
      continue;
    }
    Value *V = Map(A);
    PHINode *PN = TB.CreatePHI(V->getType(), 2, "ovf.arg");
    PN->addIncoming(PoisonValue::get(V->getType()), N);
    PN->addIncoming(V, Found);
    if (NotFound)
      PN->addIncoming(PoisonValue::get(V->getType()), NotFound);
    Args.push_back(PN);
  }
  return Tail;
}

// At the end of N, after a run of an accumulator site too long for the final
// value of its sum to tell: the sum again, from its start, in twice its bits.
// A plain reduction, which the vectorizer widens. Returns the block to
// continue in, and in Pending whether the sum reached 2^bits, which is exact
// for runs of at most 2^bits iterations (and true for longer ones).
BasicBlock *emitWideSum(Site &S, BasicBlock *N, Function &F, Value *Bound,
                        Value *&Pending) {
  LLVMContext &Ctx = F.getContext();
  unsigned Bits = S.Acc->getType()->getIntegerBitWidth();
  auto *WTy = IntegerType::get(Ctx, 2 * Bits);
  auto *BoundTy = cast<IntegerType>(Bound->getType());
  BasicBlock *Tail = N->splitBasicBlock(N->getTerminator(), "ovf.wide.done");
  BasicBlock *Hdr = BasicBlock::Create(Ctx, "ovf.wide", &F, Tail);
  N->getTerminator()->setSuccessor(0, Hdr);
  Value *Start = IRBuilder<>(N->getTerminator()).CreateZExt(S.AccStart, WTy);
  LoopCopy LC(S, Hdr, N, ".wide");
  IRBuilder<> HB(Hdr);
  PHINode *Sum = HB.CreatePHI(WTy, 2, "ovf.wide.sum");
  PHINode *Count = HB.CreatePHI(BoundTy, 2, "ovf.wide.count");
  LC.clone(S.AddendSlice, Hdr);
  Value *V = LC.map(S.AccAddend);
  Value *Next = HB.CreateAdd(Sum, HB.CreateZExt(V, WTy));
  Sum->addIncoming(Start, N);
  Sum->addIncoming(Next, Hdr);
  Count->addIncoming(ConstantInt::get(BoundTy, 0), N);
  Count->addIncoming(HB.CreateAdd(Count, ConstantInt::get(BoundTy, 1)), Hdr);
  LC.step(HB, Hdr);
  HB.CreateCondBr(HB.CreateICmpEQ(Count, Bound), Tail, Hdr);
  IRBuilder<> TB(&*Tail->getFirstInsertionPt());
  APInt Max = APInt::getMaxValue(Bits).zext(2 * Bits);
  Pending = TB.CreateICmpUGT(Next, ConstantInt::get(WTy, Max));
  unsigned BoundBits = BoundTy->getBitWidth();
  if (BoundBits > Bits) {
    APInt Runs = APInt::getOneBitSet(BoundBits, Bits);
    Value *TooLong = TB.CreateICmpUGE(Bound, ConstantInt::get(BoundTy, Runs));
    Pending = TB.CreateOr(Pending, TooLong);
  }
  return Tail;
}

void mergeReports(Plan &Pl, Function &F,
                  SmallVectorImpl<AllocaInst *> &Allocas) {
  LLVMContext &Ctx = F.getContext();
  BasicBlock &Entry = F.getEntryBlock();
  IRBuilder<> EB(&Entry, Entry.getFirstInsertionPt());
  IRBuilder<> PB(Pl.L->getLoopPreheader()->getTerminator());
  for (Site &S : Pl.Sites) {
    S.Flag = EB.CreateAlloca(EB.getInt1Ty(), nullptr, "ovf.pending");
    Allocas.push_back(S.Flag);
    PB.CreateStore(ConstantInt::getFalse(Ctx), S.Flag);
  }
  // At every exit: all rescans first (a handler may write memory that a later
  // rescan loads), then the reports in the order of the sites.
  MDBuilder MDB(Ctx);
  for (auto &[From, To] : Pl.Exits) {
    BasicBlock *N = splitExit(From, To);
    // An accumulator site is pending if its sum ends below its start, after
    // a run short enough for that to tell (see matchAccumulator), or else if
    // its sum in twice the bits says so.
    for (Site &S : Pl.Sites) {
      if (!S.Acc)
        continue;
      IRBuilder<> B(N->getTerminator());
      Value *Wrapped = B.CreateICmpULT(S.AccNext, S.AccStart);
      auto *BoundTy = cast<IntegerType>(Pl.Bound->getType());
      unsigned Bits = BoundTy->getBitWidth();
      if (S.AccLimit.getActiveBits() > Bits) {
        B.CreateStore(Wrapped, S.Flag); // every run is short enough
        continue;
      }
      Value *Short = B.CreateICmpULT(
          Pl.Bound, ConstantInt::get(BoundTy, S.AccLimit.zextOrTrunc(Bits)));
      Instruction *ThenTerm, *ElseTerm;
      SplitBlockAndInsertIfThenElse(Short, N->getTerminator()->getIterator(),
                                    &ThenTerm, &ElseTerm,
                                    MDB.createLikelyBranchWeights());
      IRBuilder<>(ThenTerm).CreateStore(Wrapped, S.Flag);
      BasicBlock *Long = ElseTerm->getParent();
      Value *Pending = ConstantInt::getTrue(Ctx);
      if (S.Acc->getType()->getIntegerBitWidth() <= 32)
        Long = emitWideSum(S, Long, F, Pl.Bound, Pending);
      IRBuilder<>(Long->getTerminator()).CreateStore(Pending, S.Flag);
      N = ThenTerm->getSuccessor(0);
    }
    SmallVector<SmallVector<Value *, 4>, 4> Args(Pl.Sites.size());
    for (unsigned I = 0; I < Pl.Sites.size(); ++I)
      N = emitRescan(Pl.Sites[I], N, F, Pl.Bound, Args[I]);
    for (unsigned I = 0; I < Pl.Sites.size(); ++I) {
      Site &S = Pl.Sites[I];
      IRBuilder<> B(N->getTerminator());
      Value *Pending = B.CreateLoad(B.getInt1Ty(), S.Flag, "ovf.pending");
      Instruction *ThenTerm =
          SplitBlockAndInsertIfThen(Pending, N->getTerminator()->getIterator(),
                                    false, MDB.createUnlikelyBranchWeights());
      BasicBlock *Then = ThenTerm->getParent();
      BasicBlock *Tail = ThenTerm->getSuccessor(0);
      auto *NC = cast<CallBase>(S.RB.Call->clone());
      for (unsigned A = 0; A < NC->arg_size(); ++A)
        NC->setArgOperand(A, Args[I][A]);
      if (auto *II = dyn_cast<InvokeInst>(NC)) {
        II->setNormalDest(Tail);
        ThenTerm->eraseFromParent();
        II->insertInto(Then, Then->end());
        for (auto &[Phi, V] : S.LpadPhis)
          Phi->addIncoming(V, Then);
      } else {
        NC->insertBefore(ThenTerm->getIterator());
      }
      N = Tail;
    }
  }
  // In the loop: a report block becomes `pending |= overflowed`, or for an
  // accumulator, nothing. Its check then has no user left: it must go, or
  // the vectorizer would not take the accumulator for a reduction.
  SmallVector<WeakTrackingVH, 4> Dead;
  for (Site &S : Pl.Sites) {
    auto *Br = cast<BranchInst>(S.RB.P->getTerminator());
    IRBuilder<> B(Br);
    Value *Ov = Br->getCondition();
    if (S.Acc) {
      Dead.push_back(Ov);
    } else {
      if (!S.RB.OnTrue)
        Ov = B.CreateNot(Ov);
      Value *Old = B.CreateLoad(B.getInt1Ty(), S.Flag);
      B.CreateStore(B.CreateOr(Old, Ov), S.Flag);
    }
    BranchInst::Create(S.RB.C, Br->getIterator());
    Br->eraseFromParent();
    S.RB.C->removePredecessor(S.RB.R);
    if (auto *II = dyn_cast<InvokeInst>(S.RB.Call))
      II->getUnwindDest()->removePredecessor(S.RB.R);
    S.RB.R->dropAllReferences();
  }
  for (Site &S : Pl.Sites)
    S.RB.R->eraseFromParent();
  for (WithOverflowInst *II : Pl.WithOverflow)
    Dead.push_back(expandWithOverflow(II));
  RecursivelyDeleteTriviallyDeadInstructionsPermissive(Dead);
}

} // namespace

PreservedAnalyses MergeOverflowReportsPass::run(Function &F,
                                                FunctionAnalysisManager &AM) {
  // Merging pays where the loop then vectorizes: not on a target without
  // vector registers (the Linux kernel's, which disables SIMD), nor on one
  // whose "vector" registers are no wider than its scalar ones (wasm32
  // without simd128 reports 64 bits, a target without an override 32).
  const TargetTransformInfo &TTI = AM.getResult<TargetIRAnalysis>(F);
  using RGK = TargetTransformInfo::RegisterKind;
  uint64_t Scalar = TTI.getRegisterBitWidth(RGK::RGK_Scalar).getFixedValue();
  if (TTI.getRegisterBitWidth(RGK::RGK_FixedWidthVector).getFixedValue() <=
          Scalar &&
      TTI.getRegisterBitWidth(RGK::RGK_ScalableVector).getKnownMinValue() == 0)
    return PreservedAnalyses::all();
  // Only the blocks of innermost loops are looked at for a report call
  // that rustc marked as one to merge.
  auto &LI = AM.getResult<LoopAnalysis>(F);
  SmallVector<Loop *, 4> Candidates;
  for (Loop *L : LI.getLoopsInPreorder()) {
    if (!L->isInnermost())
      continue;
    bool HasReport = any_of(L->blocks(), [](BasicBlock *BB) {
      return any_of(*BB, [](Instruction &I) {
        auto *CB = dyn_cast<CallBase>(&I);
        return CB && isMergeable(*CB);
      });
    });
    if (HasReport)
      Candidates.push_back(L);
  }
  if (Candidates.empty())
    return PreservedAnalyses::all();
  auto &SE = AM.getResult<ScalarEvolutionAnalysis>(F);
  auto &DT = AM.getResult<DominatorTreeAnalysis>(F);
  auto &AC = AM.getResult<AssumptionAnalysis>(F);
  auto &AA = AM.getResult<AAManager>(F);
  bool Simplified = false;
  SmallVector<Plan, 4> Plans;
  for (Loop *L : Candidates) {
    // Preheader and dedicated exits, as the loop vectorizer wants anyway.
    Simplified |= simplifyLoop(L, &DT, &LI, &SE, &AC, nullptr, false);
    // Every use of a loop value outside the loop through a phi of an exit
    // block, so that analyse sees those of a report's landing pad, which
    // a merged report reaches from the exits instead.
    Simplified |= formLCSSA(*L, DT, &LI, &SE);
    Plan Pl;
    if (analyse(L, LI, SE, AA, DT, AC, Pl))
      Plans.push_back(std::move(Pl));
  }
  if (Plans.empty()) {
    if (!Simplified)
      return PreservedAnalyses::all();
    PreservedAnalyses PA;
    PA.preserve<LoopAnalysis>();
    PA.preserve<DominatorTreeAnalysis>();
    PA.preserve<ScalarEvolutionAnalysis>();
    return PA;
  }
  // The accumulators' exit counts, before anything changes.
  for (Plan &Pl : Plans) {
    if (!Pl.ExitCount)
      continue;
    SCEVExpander Exp(SE, "ovf.count");
    Pl.Bound = Exp.expandCodeFor(Pl.ExitCount, Pl.ExitCount->getType(),
                                 Pl.L->getLoopPreheader()->getTerminator());
  }
  SmallVector<AllocaInst *, 8> Allocas;
  for (Plan &Pl : Plans)
    mergeReports(Pl, F, Allocas);
  DominatorTree NewDT(F);
  PromoteMemToReg(Allocas, NewDT);
  return PreservedAnalyses::none();
}
