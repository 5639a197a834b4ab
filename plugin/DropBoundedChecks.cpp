//===- DropBoundedChecks.cpp - Drop the checks that cannot fail -----------===//
//
// Checks that cannot fail in a loop of bounded length.
//
// The bound N is scalar evolution's, or that of a division or countdown loop
// (see maxRunsByExitTest). A sum `s += v` in a loop that runs at most N
// iterations cannot overflow if s's start plus N times v's bound fits in its
// type; a sum of such a sum, `b += a` (Adler-32 and Fletcher checksums, whose
// block length is chosen so that it fits), cannot if b's start plus the bounds
// of a in the N iterations add up to no more. Then the report is unreachable
// and the add does not wrap: the check goes and the add is a plain `add nuw`,
// which the vectorizers accept. Other checks go if their operands, each a
// value in a known range or an affine recurrence of the loop, cannot make
// them fail in N iterations (see provenNeverTaken). Nothing a program can
// observe changes, so this needs no flag, and it runs in every mode (see
// Checks.h): a proof that holds for a report holds for a panic or a trap.
//
//===----------------------------------------------------------------------===//

#include "Checks.h"
#include "OverflowChecks.h"

#include "llvm/Analysis/LazyValueInfo.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/LoopIterator.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/ScalarEvolutionExpressions.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/PatternMatch.h"
#include "llvm/Transforms/Utils/Local.h"

using namespace llvm;
using namespace rustc_overflow;

namespace {

// `Phi`'s value from the latch is `Phi + Addend` (`Next`: an add, or a
// uadd.with.overflow's first result). `Phi` has one value per iteration, so
// the add computes the same sum however often its block runs.
struct SumStep {
  PHINode *Phi;
  Value *Addend;
  Value *Start;
};

std::optional<SumStep> matchSumStep(Instruction *Next, Loop *L, LoopInfo &LI) {
  using namespace PatternMatch;
  BasicBlock *Latch = L->getLoopLatch();
  if (!Latch || LI.getLoopFor(Next->getParent()) != L)
    return std::nullopt;
  Value *X, *Y;
  if (auto *EV = dyn_cast<ExtractValueInst>(Next)) {
    auto *WO = dyn_cast<WithOverflowInst>(EV->getAggregateOperand());
    if (!WO || EV->getIndices()[0] != 0 ||
        WO->getIntrinsicID() != Intrinsic::uadd_with_overflow)
      return std::nullopt;
    X = WO->getLHS();
    Y = WO->getRHS();
  } else if (!match(Next, m_Add(m_Value(X), m_Value(Y)))) {
    return std::nullopt;
  }
  for (unsigned I = 0; I < 2; ++I) {
    auto *Phi = dyn_cast<PHINode>(I == 0 ? X : Y);
    Value *V = I == 0 ? Y : X;
    if (!Phi || Phi->getParent() != L->getHeader() ||
        Phi->getNumIncomingValues() != 2 || V == Phi)
      continue;
    unsigned FromLatch = Phi->getBasicBlockIndex(Latch);
    if (Phi->getIncomingValue(FromLatch) != Next)
      continue;
    return SumStep{Phi, V, Phi->getIncomingValue(1 - FromLatch)};
  }
  return std::nullopt;
}

constexpr unsigned BoundWidth = 128;

// The largest unsigned value scalar evolution allows for V, in BoundWidth bits.
APInt rangeMax(ScalarEvolution &SE, Value *V) {
  return SE.getUnsignedRangeMax(SE.getSCEV(V)).zext(BoundWidth);
}

// A bound on V in iteration k of a run of L (k from 0): C0 + C1 * k. With
// Sums, V may be a sum of bounded values, or its next value.
struct LinearBound {
  APInt C0, C1;
};

std::optional<LinearBound> boundOf(Value *V, Loop *L, LoopInfo &LI,
                                   ScalarEvolution &SE, bool Sums) {
  if (!SE.isSCEVable(V->getType()) ||
      SE.getTypeSizeInBits(V->getType()) > BoundWidth / 2)
    return std::nullopt;
  APInt Zero(BoundWidth, 0);
  auto *I = dyn_cast<Instruction>(V);
  if (Sums && I && L->contains(I)) {
    std::optional<SumStep> Step;
    bool IsNext = false;
    if (auto *Phi = dyn_cast<PHINode>(I)) {
      if (Phi->getParent() == L->getHeader() && L->getLoopLatch())
        if (auto *N = dyn_cast<Instruction>(
                Phi->getIncomingValueForBlock(L->getLoopLatch())))
          if ((Step = matchSumStep(N, L, LI)) && Step->Phi != Phi)
            Step.reset();
    } else if ((Step = matchSumStep(I, L, LI))) {
      IsNext = true;
    }
    if (Step) {
      // The sum's value in iteration k is at most its start plus k (or, for
      // the next value, k + 1) times the addend's bound, whether or not an add
      // wrapped (a wrapped sum is smaller than the exact one).
      std::optional<LinearBound> A = boundOf(Step->Addend, L, LI, SE, false);
      if (!A)
        return std::nullopt;
      APInt C0 = rangeMax(SE, Step->Start);
      if (IsNext)
        C0 += A->C0; // no overflow: both are below 2^64
      return LinearBound{C0, A->C0};
    }
  }
  return LinearBound{rangeMax(SE, V), Zero};
}

// The most times L's header runs in one run of the loop by scalar
// evolution's constant maximum backedge-taken count, if at most 2^32.
std::optional<uint64_t> maxHeaderRuns(Loop *L, ScalarEvolution &SE) {
  if (auto *C = dyn_cast<SCEVConstant>(SE.getConstantMaxBackedgeTakenCount(L)))
    if (C->getAPInt().getActiveBits() <= 32)
      return C->getAPInt().getZExtValue() + 1;
  return std::nullopt;
}

// The most times L's header runs by scalar evolution's symbolic maximum
// backedge-taken count, if at most 2^32, with each integer that the count
// reads from outside the loop clamped to its range where the loop is entered
// (lazy value info): scalar evolution does not look through a phi at the
// branches that lead to it. The inner loop of Adler-32 over `chunks(5552)`,
// `for &x in block`, runs `min(len, 5552) - 1` more times; that is 2^64 - 1
// unless `len` is not zero, which the outer loop's test says on each edge
// into its header. The clamped count equals the count in every run, so its
// range bounds it.
struct ClampToEntryRange : SCEVRewriteVisitor<ClampToEntryRange> {
  LazyValueInfo &LVI;
  Instruction *Entry;
  ClampToEntryRange(ScalarEvolution &SE, LazyValueInfo &LVI, Instruction *Entry)
      : SCEVRewriteVisitor(SE), LVI(LVI), Entry(Entry) {}
  const SCEV *visitUnknown(const SCEVUnknown *U) {
    Value *V = U->getValue();
    if (!V->getType()->isIntegerTy())
      return U;
    ConstantRange R = LVI.getConstantRange(V, Entry, /*UndefAllowed=*/false);
    if (R.isFullSet() || R.isEmptySet())
      return U;
    return SE.getUMaxExpr(SE.getUMinExpr(U, SE.getConstant(R.getUnsignedMax())),
                          SE.getConstant(R.getUnsignedMin()));
  }
};

// The largest value of a count of L, clamped as above, if below 2^32.
std::optional<uint64_t> maxAtEntry(const SCEV *Count, Loop *L,
                                   ScalarEvolution &SE, LazyValueInfo &LVI) {
  BasicBlock *Pre = L->getLoopPredecessor();
  if (!Pre || isa<SCEVCouldNotCompute>(Count))
    return std::nullopt;
  const SCEV *Clamped =
      ClampToEntryRange(SE, LVI, Pre->getTerminator()).visit(Count);
  APInt Max = SE.getUnsignedRangeMax(Clamped);
  if (Max.getActiveBits() > 32)
    return std::nullopt;
  return Max.getZExtValue();
}

std::optional<uint64_t> maxHeaderRunsAtEntry(Loop *L, ScalarEvolution &SE,
                                             LazyValueInfo &LVI) {
  std::optional<uint64_t> BTC =
      maxAtEntry(SE.getSymbolicMaxBackedgeTakenCount(L), L, SE, LVI);
  return BTC ? std::optional<uint64_t>(*BTC + 1) : std::nullopt;
}

// The most times B, a block of L, runs in one run of L: at most N, and at
// most the exit count of an exiting block X that runs once in each iteration
// and whose edge into the loop dominates B. X leaves in iteration E (from 0),
// its exit count, if the loop gets there; B runs after X has gone on, so only
// in iterations 0 to E - 1. That is one fewer than the header's runs where X
// is the header: a loop that tests `ptr == end` at its top, as an unrotated
// `for &x in slice` is in panic mode, adds in 5552 iterations, not 5553.
// IndVarSimplify relies on the same reading of an exit count for an exiting
// block of the loop itself (not of a subloop) that dominates the latch
// (`optimizeLoopExits`, which skips the last iteration of such blocks).
uint64_t maxRunsOf(BasicBlock *B, Loop *L, LoopInfo &LI, ScalarEvolution &SE,
                   DominatorTree &DT, LazyValueInfo &LVI, uint64_t N) {
  BasicBlock *Latch = L->getLoopLatch();
  SmallVector<BasicBlock *, 4> Exiting;
  L->getExitingBlocks(Exiting);
  for (BasicBlock *X : Exiting) {
    auto *Br = dyn_cast<BranchInst>(X->getTerminator());
    if (!Latch || !Br || !Br->isConditional() || LI.getLoopFor(X) != L ||
        !DT.dominates(X, Latch) ||
        L->contains(Br->getSuccessor(0)) == L->contains(Br->getSuccessor(1)))
      continue;
    BasicBlock *Stay =
        Br->getSuccessor(L->contains(Br->getSuccessor(0)) ? 0 : 1);
    if (!DT.dominates(BasicBlockEdge(X, Stay), B))
      continue;
    if (std::optional<uint64_t> E =
            maxAtEntry(SE.getExitCount(L, X, ScalarEvolution::SymbolicMaximum),
                       L, SE, LVI))
      N = std::min(N, *E);
  }
  return N;
}

// Is V nonzero where L is entered, from Pre to its header H: does a branch on
// `V == 0` (or `V != 0`) lead there only when it is not?
bool nonZeroAtEntry(Value *V, BasicBlock *Pre, BasicBlock *H,
                    DominatorTree &DT) {
  using namespace PatternMatch;
  // A constant has no use list (and is exact in its range); a global's users
  // may be in other functions.
  if (!isa<Instruction, Argument>(V))
    return false;
  for (User *U : V->users()) {
    CmpPredicate Pred;
    if (!match(U, m_ICmp(Pred, m_Specific(V), m_Zero())) ||
        !ICmpInst::isEquality(Pred))
      continue;
    for (User *CU : U->users()) {
      auto *Br = dyn_cast<BranchInst>(CU);
      if (!Br || !Br->isConditional())
        continue;
      BasicBlock *NonZero = Br->getSuccessor(Pred == ICmpInst::ICMP_EQ ? 1 : 0);
      BasicBlockEdge Edge(Br->getParent(), NonZero);
      if (Br->getSuccessor(0) != Br->getSuccessor(1) &&
          ((Br->getParent() == Pre && NonZero == H) || DT.dominates(Edge, Pre)))
        return true;
    }
  }
  return false;
}

// The most times the header of a division or countdown loop runs, which
// scalar evolution does not bound:
// - a loop that divides `x` by a constant C >= 2 in each iteration and goes on
//   only while `x` (or `x / C`) is at least K, `while n >= 10000 { ...; n /=
//   10000 }` in integer formatting, runs at most 1 + log_C(max / K) times
//   (llvm#116119);
// - a loop that subtracts a constant d from `x` in each iteration and goes on
//   only while `x` (or `x - d`) is at least K, without wrapping (see below),
//   runs at most 2 + (max - K) / d times (1 + for `x - d`). That is how a loop
//   over `chunks_exact(4)` of `len % 22208` bytes comes out; scalar evolution
//   computes its trip count with the urem expanded, `len - 22208 * (len /
//   22208)`, and loses the remainder's range. Here max is the start's at the
//   loop's entry, with the conditions that lead there (lazy value info).
std::optional<uint64_t> maxRunsByExitTest(Loop *L, LoopInfo &LI,
                                          ScalarEvolution &SE,
                                          DominatorTree &DT,
                                          LazyValueInfo &LVI) {
  using namespace PatternMatch;
  BasicBlock *Latch = L->getLoopLatch(), *Pre = L->getLoopPredecessor();
  if (!Latch || !Pre)
    return std::nullopt;
  const DataLayout &DL = L->getHeader()->getDataLayout();
  SmallVector<BasicBlock *, 4> Exiting;
  L->getExitingBlocks(Exiting);
  std::optional<uint64_t> Best;
  for (BasicBlock *E : Exiting) {
    // E runs once in every iteration that goes on to the next.
    auto *Br = dyn_cast<BranchInst>(E->getTerminator());
    if (LI.getLoopFor(E) != L || !DT.dominates(E, Latch) || !Br ||
        !Br->isConditional())
      continue;
    CmpPredicate Pred;
    Value *X;
    const APInt *K;
    if (!match(Br->getCondition(), m_ICmp(Pred, m_Value(X), m_APInt(K))))
      continue;
    if (!L->contains(Br->getSuccessor(0)))
      Pred = CmpInst::getInversePredicate(Pred);
    else if (L->contains(Br->getSuccessor(1)))
      continue;
    // The loop goes on only while X >= Min.
    APInt Min;
    if ((Pred == ICmpInst::ICMP_UGT && !K->isMaxValue()) ||
        (Pred == ICmpInst::ICMP_NE && K->isZero()))
      Min = *K + 1;
    else if (Pred == ICmpInst::ICMP_UGE && !K->isZero())
      Min = *K;
    else
      continue;
    // X is a header phi P, or P's next value: P / C or P - d.
    auto *Phi = dyn_cast<PHINode>(X);
    bool Next = !Phi;
    if (auto *I = dyn_cast<BinaryOperator>(X);
        Next && I &&
        (I->getOpcode() == Instruction::UDiv ||
         I->getOpcode() == Instruction::Add))
      Phi = dyn_cast<PHINode>(I->getOperand(0));
    if (!Phi || Phi->getParent() != L->getHeader() ||
        Phi->getNumIncomingValues() != 2)
      continue;
    Value *Start = Phi->getIncomingValueForBlock(Pre);
    Value *Step = Phi->getIncomingValueForBlock(Latch);
    if (Next && Step != X)
      continue;
    const APInt *C;
    uint64_t Runs = 1;
    if (match(Step, m_UDiv(m_Specific(Phi), m_APInt(C))) && C->uge(2)) {
      // In iteration k, X is at most max / C^k (or C^(k+1)), and iteration
      // k + 1 runs only if it is at least Min.
      APInt V = SE.getUnsignedRangeMax(SE.getSCEV(Start));
      if (Next)
        V = V.udiv(*C);
      for (; V.uge(Min); V = V.udiv(*C))
        ++Runs;
    } else if (match(Step, m_Add(m_Specific(Phi), m_APInt(C))) &&
               C->isNegative() && !C->isMinSignedValue()) {
      // P goes down by d from its start S. Each test that goes on leaves P
      // at least d, so that the next P - d does not wrap, if Min >= d, or if
      // d is a power of two that divides S, so that every P is a multiple of
      // d, and Min >= 1. For `x - d`, the first test needs S >= d. At most
      // 64 bits, computed in BoundWidth, so that rounding to multiples of d
      // cannot wrap.
      if (SE.getTypeSizeInBits(Start->getType()) > BoundWidth / 2)
        continue;
      Instruction *Entry = Pre->getTerminator();
      ConstantRange R =
          LVI.getConstantRange(Start, Entry, /*UndefAllowed=*/false)
              .intersectWith(
                  computeConstantRange(Start, false, true, nullptr, Entry, &DT))
              .intersectWith(SE.getUnsignedRange(SE.getSCEV(Start)));
      if (nonZeroAtEntry(Start, Pre, L->getHeader(), DT))
        R = R.intersectWith(ConstantRange::getNonEmpty(
            APInt(R.getBitWidth(), 1), APInt::getZero(R.getBitWidth())));
      if (R.isEmptySet())
        continue;
      APInt D = (-*C).zext(BoundWidth);
      APInt SMin = R.getUnsignedMin().zext(BoundWidth);
      APInt SMax = R.getUnsignedMax().zext(BoundWidth);
      APInt Least = Min.zext(BoundWidth);
      bool Multiples =
          D.isPowerOf2() &&
          computeKnownBits(Start, DL).countMinTrailingZeros() >= D.logBase2();
      if (Multiples) {
        SMin = (SMin + D - 1).udiv(D) * D;
        SMax = SMax.udiv(D) * D;
      }
      if ((Least.ult(D) && !Multiples) || (Next && SMin.ult(D)) ||
          SMax.ult(SMin))
        continue;
      // Iteration k + 1 runs only if S - d * k (or S - d * (k + 1)) >= Min.
      if (SMax.uge(Least)) {
        APInt More = (SMax - Least).udiv(D) + (Next ? 0 : 1);
        if (More.getActiveBits() > 32)
          continue;
        Runs += More.getZExtValue();
      }
    } else {
      continue;
    }
    Best = std::min(Best.value_or(Runs), Runs);
  }
  return Best;
}

// Can the add of this report block's check never overflow in a loop whose
// header runs at most N times?
bool provenNoOverflow(const ReportBlock &RB, Loop *L, LoopInfo &LI,
                      ScalarEvolution &SE, uint64_t N64) {
  Value *X, *Y;
  WithOverflowInst *WO;
  Instruction *Next = matchCheckedUAdd(RB, X, Y, WO);
  if (!Next || !L->contains(Next))
    return false;
  std::optional<SumStep> Step = matchSumStep(Next, L, LI);
  if (!Step)
    return false;
  unsigned Bits = SE.getTypeSizeInBits(Next->getType());
  std::optional<LinearBound> A = boundOf(Step->Addend, L, LI, SE, true);
  if (!A)
    return false;
  // In a run of N iterations, the sum ends at most at its start plus the
  // addend's bounds in each: N * C0 + C1 * N(N-1)/2. With N at most 2^32
  // and C0 and C1 below 2^65, the sum is below 2^98 + 2^127 and fits in 128
  // bits.
  APInt N(BoundWidth, N64);
  APInt Max = rangeMax(SE, Step->Start);
  Max += N * A->C0;
  Max += A->C1 * (N * (N - 1)).lshr(1);
  return Max.ule(APInt::getMaxValue(Bits).zext(BoundWidth));
}

// The values of an integer S in the first N iterations of L, in BoundWidth
// bits: in iteration k, exactly (no wrap) between Lo + Step * k and Hi + Step *
// k, read as signed or unsigned. An affine recurrence of L with a constant step
// gets its step, anything else its range and step 0.
struct AffineRange {
  APInt Lo, Hi, Step;
};

// The least and the largest value of R in the first N iterations.
std::pair<APInt, APInt> extremes(const AffineRange &R, uint64_t N) {
  APInt Span = R.Step * APInt(BoundWidth, N - 1);
  APInt Zero(BoundWidth, 0);
  return {R.Lo + APIntOps::smin(Span, Zero), R.Hi + APIntOps::smax(Span, Zero)};
}

// Do all values from Lo to Hi (in BoundWidth bits) fit in Bits bits, read as
// signed or unsigned?
bool fitsIn(const APInt &Lo, const APInt &Hi, unsigned Bits, bool Signed) {
  if (Signed)
    return Lo.sge(APInt::getSignedMinValue(Bits).sext(BoundWidth)) &&
           Hi.sle(APInt::getSignedMaxValue(Bits).sext(BoundWidth));
  return !Lo.isNegative() && Hi.sle(APInt::getMaxValue(Bits).zext(BoundWidth));
}

std::optional<AffineRange> affineRange(const SCEV *S, Loop *L,
                                       ScalarEvolution &SE, uint64_t N,
                                       bool Signed) {
  if (!S->getType()->isIntegerTy() ||
      SE.getTypeSizeInBits(S->getType()) > BoundWidth / 2)
    return std::nullopt;
  unsigned Bits = SE.getTypeSizeInBits(S->getType());
  APInt Step(BoundWidth, 0);
  auto *AR = dyn_cast<SCEVAddRecExpr>(S);
  if (AR && AR->getLoop() == L && AR->isAffine())
    if (auto *C = dyn_cast<SCEVConstant>(AR->getStepRecurrence(SE))) {
      S = AR->getStart();
      Step = C->getAPInt().sext(BoundWidth);
    }
  ConstantRange R = Signed ? SE.getSignedRange(S) : SE.getUnsignedRange(S);
  APInt Lo = Signed ? R.getSignedMin().sext(BoundWidth)
                    : R.getUnsignedMin().zext(BoundWidth);
  APInt Hi = Signed ? R.getSignedMax().sext(BoundWidth)
                    : R.getUnsignedMax().zext(BoundWidth);
  // The recurrence's value in iteration k is start + Step * k modulo 2^Bits;
  // it is that sum itself if no sum of the first N iterations leaves the type.
  AffineRange A{Lo, Hi, Step};
  auto [Min, Max] = extremes(A, N);
  if (!fitsIn(Min, Max, Bits, Signed))
    return std::nullopt;
  return A;
}

// Is the branch to this report block never taken in the first N iterations of
// L? Its condition is a compare, or the overflow bit of an add or subtract,
// of values whose ranges (affineRange) say so.
bool provenNeverTaken(const ReportBlock &RB, Loop *L, ScalarEvolution &SE,
                      uint64_t N) {
  using namespace PatternMatch;
  Value *Cond = cast<BranchInst>(RB.P->getTerminator())->getCondition();
  Value *A, *B;
  CmpPredicate Pred;
  bool Add = false, Overflow = false;
  if (match(Cond, m_ICmp(Pred, m_Value(A), m_Value(B)))) {
    // The predicate that takes the branch to the report.
    if (!RB.OnTrue)
      Pred = CmpInst::getInversePredicate(Pred);
  } else if (auto *EV = dyn_cast<ExtractValueInst>(Cond)) {
    auto *WO = dyn_cast<WithOverflowInst>(EV->getAggregateOperand());
    if (!WO || !RB.OnTrue || EV->getIndices()[0] != 1 ||
        WO->getBinaryOp() == Instruction::Mul)
      return false;
    A = WO->getLHS();
    B = WO->getRHS();
    Add = WO->getBinaryOp() == Instruction::Add;
    Overflow = true;
    Pred = WO->isSigned() ? ICmpInst::ICMP_SLT : ICmpInst::ICMP_ULT;
  } else {
    return false;
  }
  bool Signed = ICmpInst::isSigned(Pred);
  std::optional<AffineRange> RA = affineRange(SE.getSCEV(A), L, SE, N, Signed);
  std::optional<AffineRange> RBr = affineRange(SE.getSCEV(B), L, SE, N, Signed);
  if (!RA || !RBr)
    return false;
  // D = A + B or A - B in iteration k lies in [Lo + Step * k, Hi + Step * k],
  // so between DLo and DHi in the first N iterations.
  AffineRange D = Add ? AffineRange{RA->Lo + RBr->Lo, RA->Hi + RBr->Hi,
                                    RA->Step + RBr->Step}
                      : AffineRange{RA->Lo - RBr->Hi, RA->Hi - RBr->Lo,
                                    RA->Step - RBr->Step};
  auto [DLo, DHi] = extremes(D, N);
  // The add or subtract overflows iff D leaves the type.
  if (Overflow)
    return fitsIn(DLo, DHi, SE.getTypeSizeInBits(A->getType()), Signed);
  APInt Zero(BoundWidth, 0);
  switch (Pred) {
  case ICmpInst::ICMP_EQ:
    return DLo.sgt(Zero) || DHi.slt(Zero);
  case ICmpInst::ICMP_NE:
    return DLo.isZero() && DHi.isZero();
  case ICmpInst::ICMP_ULT:
  case ICmpInst::ICMP_SLT:
    return DLo.sge(Zero);
  case ICmpInst::ICMP_ULE:
  case ICmpInst::ICMP_SLE:
    return DLo.sgt(Zero);
  case ICmpInst::ICMP_UGT:
  case ICmpInst::ICMP_SGT:
    return DHi.sle(Zero);
  case ICmpInst::ICMP_UGE:
  case ICmpInst::ICMP_SGE:
    return DHi.slt(Zero);
  default:
    return false;
  }
}

// A workaround for the SLP vectorizer, which takes the phis of a block as its
// candidate lanes in the order they are in when they tie in its sort (same
// type, values from the same opcode). Adler-32's eight lanes (adler2's
// `compute`) vectorize in the order `a0 a1 a2 a3 b0 b1 b2 b3` and not in
// `b3 b2 b1 a3 a2 a1 a0 b0`, the order LICM leaves while the loop has its
// checks: its first run, before loop rotation, does not hoist the lanes'
// addresses past a report call, which may not return, so it promotes lane 0
// there and the other lanes in its second run. A loop that lost all the
// checks in its own blocks gets its header's phis in the order in which it
// computes their values from the latch (values from outside the loop first),
// which for adler2 is that of the source's updates. That is not always an
// order SLP takes (`a0 b0 a1 b1 ...` is not), nor always off mode's.
void orderHeaderPhis(Loop *L, LoopInfo &LI) {
  BasicBlock *Latch = L->getLoopLatch();
  if (!Latch)
    return;
  DenseMap<const Instruction *, unsigned> Position;
  unsigned Next = 1;
  LoopBlocksRPO RPO(L);
  RPO.perform(&LI);
  for (BasicBlock *BB : RPO)
    for (Instruction &I : *BB)
      Position[&I] = Next++;
  BasicBlock *Header = L->getHeader();
  SmallVector<std::pair<unsigned, PHINode *>, 16> Phis;
  for (PHINode &Phi : Header->phis()) {
    auto *I = dyn_cast<Instruction>(Phi.getIncomingValueForBlock(Latch));
    Phis.emplace_back(I ? Position.lookup(I) : 0, &Phi);
  }
  stable_sort(Phis, [](auto &A, auto &B) { return A.first < B.first; });
  auto FirstNonPhi = Header->getFirstNonPHIIt();
  for (auto &[Key, Phi] : Phis)
    Phi->moveBefore(FirstNonPhi);
}

} // namespace

PreservedAnalyses DropBoundedChecksPass::run(Function &F,
                                             FunctionAnalysisManager &AM) {
  // A function without loops costs the loop info that the loop vectorizer,
  // right after, asks for anyway; in one with loops, only the terminators
  // of their blocks are looked at until a check is found.
  auto &LI = AM.getResult<LoopAnalysis>(F);
  if (LI.empty())
    return PreservedAnalyses::all();
  SmallVector<ReportBlock, 4> Proven;
  // The loops whose own blocks lose all their checks.
  SmallVector<Loop *, 4> Changed;
  ScalarEvolution *SE = nullptr;
  DominatorTree *DT = nullptr;
  LazyValueInfo *LVI = nullptr;
  for (Loop *L : LI.getLoopsInPreorder()) {
    size_t Before = Proven.size(), Checks = 0;
    std::optional<uint64_t> N;
    SmallPtrSet<BasicBlock *, 4> Matched;
    for (BasicBlock *BB : L->blocks()) {
      if (LI.getLoopFor(BB) != L)
        continue;
      ReportBlock RB;
      if (!matchCheck(BB, L, RB))
        continue;
      ++Checks;
      Matched.insert(RB.R);
      if (!SE) {
        SE = &AM.getResult<ScalarEvolutionAnalysis>(F);
        DT = &AM.getResult<DominatorTreeAnalysis>(F);
        LVI = &AM.getResult<LazyValueAnalysis>(F);
      }
      if (!N) {
        // The least of the bounds that can be found.
        for (std::optional<uint64_t> M :
             {maxHeaderRuns(L, *SE), maxHeaderRunsAtEntry(L, *SE, *LVI),
              maxRunsByExitTest(L, LI, *SE, *DT, *LVI)})
          if (M)
            N = std::min(N.value_or(*M), *M);
        if (!N)
          break;
      }
      uint64_t Runs = maxRunsOf(BB, L, LI, *SE, *DT, *LVI, *N);
      if (Runs == 0 || provenNoOverflow(RB, L, LI, *SE, Runs) ||
          provenNeverTaken(RB, L, *SE, Runs))
        Proven.push_back(RB);
    }
    if (!Checks)
      continue;
    // A report call in the loop that is not a matched check's keeps the
    // loop from losing all its checks.
    bool Other = any_of(L->blocks(), [&](BasicBlock *BB) {
      return LI.getLoopFor(BB) == L && !Matched.count(BB) &&
             any_of(*BB, isReportCall);
    });
    if (!Other && Proven.size() - Before == Checks)
      Changed.push_back(L);
  }
  if (Proven.empty())
    return PreservedAnalyses::all();
  for (Loop *L : Changed)
    orderHeaderPhis(L, LI);
  SmallVector<WeakTrackingVH, 8> Dead;
  for (ReportBlock &RB : Proven) {
    // Matched again, not kept from the proof: rewriting an earlier site may
    // have replaced this one's operand (`b += a` after `a`'s add).
    Value *X, *Y;
    WithOverflowInst *WO;
    Instruction *Next = matchCheckedUAdd(RB, X, Y, WO);
    // The proof covers the runs of the check's block. An add in another
    // block (above an exit that the check's block is below) may run once
    // more, and wrap: it keeps its flags and its intrinsic.
    Instruction *Add = WO ? WO : Next;
    if (Add && Add->getParent() != RB.P)
      Next = nullptr;
    // LoopInfo, the dominator tree and lazy value info then hold a deleted
    // block: nothing below asks them, and the pass preserves no analysis.
    dropCheck(RB, Next, WO, Dead);
  }
  RecursivelyDeleteTriviallyDeadInstructionsPermissive(Dead);
  return PreservedAnalyses::none();
}
