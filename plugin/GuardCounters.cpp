//===- GuardCounters.cpp - Version a loop of counters on their bound ------===//
//
// Counters that cannot overflow in this run of the loop.
//
// A histogram, `counts[b] += 1` over a slice, has no bound that holds for
// every run: whether a counter can overflow depends on the counts it starts
// with. But it cannot if the largest counter plus everything the loop can add
// to the array fits. A loop whose only checks are such counters, in one object
// that nothing else in the loop writes, is versioned: if the loop may run at
// least as many iterations as there are elements that a counter can be (at
// most 65536; fewer iterations would not pay for the scan), the preheader
// finds the largest of those elements, and if it plus the loop's maximum
// number of iterations times the counters' steps fits in their type, the loop
// runs in a copy without its checks (which LLVM may unroll: no call is left in
// it); else it runs as it was. As for DropBoundedChecksPass, nothing a
// program can observe changes: in the copy, the checks could not fail.
//
//===----------------------------------------------------------------------===//

#include "Checks.h"
#include "OverflowChecks.h"

#include "llvm/Analysis/AliasAnalysis.h"
#include "llvm/Analysis/AssumptionCache.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/LoopIterator.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/PatternMatch.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/Local.h"
#include "llvm/Transforms/Utils/LoopSimplify.h"
#include "llvm/Transforms/Utils/LoopUtils.h"
#include "llvm/Transforms/Utils/ScalarEvolutionExpander.h"
#include "llvm/Transforms/Utils/ValueMapper.h"

using namespace llvm;
using namespace rustc_overflow;

namespace {

// One counter: the report block checks the unsigned add `Old + C` of a
// constant to a value loaded in the loop; `Sum` is that add, or the
// uadd.with.overflow's first result. (planCounters checks that the loop
// stores nothing into the counters' array but such sums, where their `Old`
// was loaded from.)
struct Counter {
  ReportBlock RB;
  LoadInst *Old;
  Instruction *Sum;
  WithOverflowInst *WO;
  uint64_t C;
};

bool matchCounter(const ReportBlock &RB, Counter &Out) {
  using namespace PatternMatch;
  Value *Cond = cast<BranchInst>(RB.P->getTerminator())->getCondition();
  Value *Old = nullptr;
  APInt C;
  Out.WO = nullptr;
  Out.Sum = nullptr;
  if (auto *EV = dyn_cast<ExtractValueInst>(Cond)) {
    auto *WO = dyn_cast<WithOverflowInst>(EV->getAggregateOperand());
    const APInt *K;
    if (!RB.OnTrue || EV->getIndices()[0] != 1 || !WO ||
        WO->getIntrinsicID() != Intrinsic::uadd_with_overflow ||
        !match(WO->getArgOperand(1), m_APInt(K)))
      return false;
    Old = WO->getArgOperand(0);
    C = *K;
    Out.WO = WO;
    for (User *U : WO->users())
      if (auto *E = dyn_cast<ExtractValueInst>(U))
        if (E->getIndices()[0] == 0)
          Out.Sum = E;
  } else {
    // InstCombine's forms of the check: `Old == MAX` for C = 1, else
    // `Old > MAX - C`.
    CmpPredicate Pred;
    const APInt *K;
    if (!match(Cond, m_ICmp(Pred, m_Value(Old), m_APInt(K))))
      return false;
    if (!RB.OnTrue)
      Pred = CmpInst::getInversePredicate(Pred);
    if (Pred == ICmpInst::ICMP_EQ && K->isAllOnes())
      C = APInt(K->getBitWidth(), 1);
    else if (Pred == ICmpInst::ICMP_UGT && !K->isAllOnes())
      C = ~*K;
    else
      return false;
    for (User *U : Old->users())
      if (match(U, m_Add(m_Specific(Old), m_SpecificInt(C))))
        Out.Sum = cast<Instruction>(U);
  }
  auto *Load = dyn_cast<LoadInst>(Old);
  if (!Load || !Load->isSimple() || !Out.Sum || C.isZero() ||
      C.getActiveBits() > 32)
    return false;
  Out.RB = RB;
  Out.Old = Load;
  Out.C = C.getZExtValue();
  return true;
}

struct CounterLoop {
  SmallVector<Counter, 4> Counters;
  Value *Object;   // a noalias argument or an alloca
  Type *EltTy;     // the counters' type
  Align EltAlign;  // the least alignment of the counters' loads
  uint64_t First;  // the first element that a counter can be
  uint64_t Count;  // how many elements from there a counter can be
  const SCEV *BTC; // the loop's maximum backedge-taken count
};

// Does each block of the loop run at most once per iteration? Not if the
// loop contains an irreducible cycle, which LoopInfo does not count as a loop:
// then an edge inside the loop goes back, in reverse post-order, to a block
// other than the header.
bool runsOncePerIteration(Loop *L, LoopInfo &LI) {
  LoopBlocksRPO RPO(L);
  RPO.perform(&LI);
  DenseMap<BasicBlock *, unsigned> Num;
  for (BasicBlock *BB : RPO)
    Num[BB] = Num.size();
  for (BasicBlock *BB : L->blocks())
    for (BasicBlock *S : successors(BB))
      if (S != L->getHeader() && L->contains(S) && Num[S] <= Num[BB])
        return false;
  return true;
}

bool planCounters(Loop *L, LoopInfo &LI, ScalarEvolution &SE, AAResults &AA,
                  CounterLoop &Out) {
  if (!L->isInnermost() || !L->getLoopLatch() ||
      findStringMetadataForLoop(L, "rustc.overflow.counters"))
    return false;
  SmallVector<StoreInst *, 4> Stores;
  // The checks' own blocks in the loop, a report's or a trap's.
  SmallPtrSet<BasicBlock *, 4> Failed;
  for (BasicBlock *BB : L->blocks()) {
    ReportBlock RB;
    if (!matchCheck(BB, L, RB))
      continue;
    Counter C;
    if (!matchCounter(RB, C) || !L->contains(C.Old) || !L->contains(C.Sum) ||
        (C.WO && !L->contains(C.WO)))
      return false;
    Out.Counters.push_back(C);
    if (L->contains(RB.R))
      Failed.insert(RB.R);
  }
  if (Out.Counters.empty() || !L->isSafeToClone() ||
      !runsOncePerIteration(L, LI))
    return false;
  for (BasicBlock *BB : L->blocks()) {
    if (Failed.count(BB))
      continue;
    for (Instruction &I : *BB) {
      if (auto *S = dyn_cast<StoreInst>(&I))
        Stores.push_back(S);
      else if (I.mayWriteToMemory() || isReportCall(I))
        return false;
    }
  }
  // One object of a known size: a noalias argument or an alloca.
  const DataLayout &DL = L->getHeader()->getDataLayout();
  Out.EltTy = Out.Counters[0].Old->getType();
  Out.Object = getUnderlyingObject(Out.Counters[0].Old->getPointerOperand());
  uint64_t Size = 0;
  if (auto *A = dyn_cast<Argument>(Out.Object)) {
    if (A->hasNoAliasAttr())
      Size = A->getDereferenceableBytes();
  } else if (auto *AI = dyn_cast<AllocaInst>(Out.Object)) {
    if (auto S = AI->getAllocationSize(DL); S && !S->isScalable())
      Size = S->getFixedValue();
  }
  uint64_t EltSize = DL.getTypeStoreSize(Out.EltTy);
  if (Size < EltSize)
    return false;
  // Each counter is an element of the object: at a multiple of their size,
  // inside it. The guard scans the elements from the first to the last that a
  // counter can be.
  const SCEV *Base = SE.getSCEV(Out.Object);
  uint64_t Lo = Size, Hi = 0;
  Out.EltAlign = Out.Counters[0].Old->getAlign();
  for (const Counter &C : Out.Counters) {
    Value *Ptr = C.Old->getPointerOperand();
    const SCEV *Off = SE.getMinusSCEV(SE.getSCEV(Ptr), Base);
    if (C.Old->getType() != Out.EltTy ||
        getUnderlyingObject(Ptr) != Out.Object ||
        isa<SCEVCouldNotCompute>(Off) ||
        SE.getUnsignedRangeMax(Off).ugt(Size - EltSize) ||
        SE.getConstantMultiple(Off).urem(EltSize) != 0)
      return false;
    Lo = std::min(Lo, SE.getUnsignedRangeMin(Off).getZExtValue());
    Hi = std::max(Hi, SE.getUnsignedRangeMax(Off).getZExtValue());
    Out.EltAlign = std::min(Out.EltAlign, C.Old->getAlign());
  }
  // The scan's loads are at multiples of EltSize from the counters'.
  Out.EltAlign = commonAlignment(Out.EltAlign, EltSize);
  Out.First = Lo / EltSize;
  Out.Count = Hi / EltSize - Out.First + 1;
  if (Out.Count > 65536)
    return false;
  // Every store writes a counter's sum back, or does not touch the object.
  MemoryLocation Obj(Out.Object, LocationSize::precise(Size));
  for (StoreInst *S : Stores) {
    bool IsCounter = any_of(Out.Counters, [&](const Counter &C) {
      return S->isSimple() &&
             S->getPointerOperand() == C.Old->getPointerOperand() &&
             S->getValueOperand() == C.Sum;
    });
    if (!IsCounter && !AA.isNoAlias(MemoryLocation::get(S), Obj))
      return false;
  }
  // The guard compares the count with Count - 1, in the count's type.
  Out.BTC = SE.getSymbolicMaxBackedgeTakenCount(L);
  if (isa<SCEVCouldNotCompute>(Out.BTC))
    return false;
  unsigned BTCBits = SE.getTypeSizeInBits(Out.BTC->getType());
  return BTCBits <= 64 &&
         APInt::getMaxValue(BTCBits).getZExtValue() >= Out.Count - 1;
}

void guardCounters(Function &F, Loop *L, CounterLoop &CL, LoopInfo &LI,
                   ScalarEvolution &SE, DominatorTree &DT) {
  LLVMContext &Ctx = F.getContext();
  formLCSSA(*L, DT, &LI, &SE);
  BasicBlock *PH = L->getLoopPreheader();
  // Frozen: where the loop can leave by another exit first, the count may be
  // poison, and the guard branches on it.
  SCEVExpander Exp(SE, "counters");
  IRBuilder<> EB(PH->getTerminator());
  Value *BTC = EB.CreateFreeze(
      Exp.expandCodeFor(CL.BTC, CL.BTC->getType(), PH->getTerminator()));
  uint64_t Step = 0;
  for (const Counter &C : CL.Counters)
    Step += C.C;
  // The original loop keeps its checks, for the runs the guard does not admit;
  // its copy loses them.
  BasicBlock *SlowPH = SplitEdge(PH, L->getHeader(), &DT, &LI);
  SmallVector<BasicBlock *, 16> Blocks;
  ValueToValueMapTy VM;
  cloneLoopWithPreheader(SlowPH, PH, L, VM, ".counters", &LI, &DT, Blocks);
  remapInstructionsInBlocks(Blocks, VM);
  BasicBlock *FastPH = cast<BasicBlock>(VM[SlowPH]);
  SmallVector<BasicBlock *, 4> Exits;
  L->getUniqueExitBlocks(Exits);
  for (BasicBlock *E : Exits)
    for (PHINode &Phi : E->phis())
      for (unsigned I = 0, N = Phi.getNumIncomingValues(); I < N; ++I)
        if (BasicBlock *From = Phi.getIncomingBlock(I); L->contains(From)) {
          Value *V = Phi.getIncomingValue(I);
          auto It = VM.find(V);
          Phi.addIncoming(It == VM.end() ? V : (Value *)It->second,
                          cast<BasicBlock>(VM[From]));
        }
  addStringMetadataToLoop(L, "rustc.overflow.counters");
  // PH: if the loop may run long enough, scan the counters for the largest.
  BasicBlock *Scan = BasicBlock::Create(Ctx, "counters.scan", &F, SlowPH);
  BasicBlock *Check = BasicBlock::Create(Ctx, "counters.check", &F, SlowPH);
  if (Loop *Parent = L->getParentLoop()) {
    Parent->addBasicBlockToLoop(Scan, LI);
    Parent->addBasicBlockToLoop(Check, LI);
  }
  Instruction *PHTerm = PH->getTerminator();
  IRBuilder<> PB(PHTerm);
  PB.CreateCondBr(
      PB.CreateICmpUGE(BTC, ConstantInt::get(BTC->getType(), CL.Count - 1)),
      Scan, SlowPH);
  PHTerm->eraseFromParent();
  IRBuilder<> SB(Scan);
  Type *IdxTy = Type::getInt64Ty(Ctx);
  PHINode *Idx = SB.CreatePHI(IdxTy, 2, "counters.i");
  PHINode *Max = SB.CreatePHI(CL.EltTy, 2, "counters.max");
  Idx->addIncoming(ConstantInt::get(IdxTy, CL.First), PH);
  Max->addIncoming(ConstantInt::get(CL.EltTy, 0), PH);
  // Each element frozen: one that no counter is may be uninitialized.
  Value *Elt = SB.CreateFreeze(SB.CreateAlignedLoad(
      CL.EltTy, SB.CreateInBoundsGEP(CL.EltTy, CL.Object, Idx), CL.EltAlign));
  Value *NextMax = SB.CreateBinaryIntrinsic(Intrinsic::umax, Max, Elt);
  Value *NextIdx = SB.CreateNUWAdd(Idx, ConstantInt::get(IdxTy, 1));
  Idx->addIncoming(NextIdx, Scan);
  Max->addIncoming(NextMax, Scan);
  SB.CreateCondBr(
      SB.CreateICmpEQ(NextIdx, ConstantInt::get(IdxTy, CL.First + CL.Count)),
      Check, Scan);
  // The copy, if MAX - max >= Step * (BTC + 1), in 128 bits: BTC + 1 is at
  // most 2^64 and Step, a sum of steps below 2^32, below 2^64.
  IRBuilder<> CB(Check);
  Type *Wide = Type::getInt128Ty(Ctx);
  unsigned Bits = CL.EltTy->getIntegerBitWidth();
  Value *Room =
      CB.CreateSub(ConstantInt::get(Wide, APInt::getMaxValue(Bits).zext(128)),
                   CB.CreateZExt(NextMax, Wide));
  Value *Need = CB.CreateMul(
      CB.CreateAdd(CB.CreateZExt(BTC, Wide), ConstantInt::get(Wide, 1)),
      ConstantInt::get(Wide, Step));
  CB.CreateCondBr(CB.CreateICmpUGE(Room, Need), FastPH, SlowPH,
                  MDBuilder(Ctx).createLikelyBranchWeights());
  // FastPH, a copy of SlowPH, is entered from Check; SlowPH from PH and Check.
  for (PHINode &Phi : FastPH->phis())
    Phi.replaceIncomingBlockWith(PH, Check);
  for (PHINode &Phi : SlowPH->phis())
    Phi.addIncoming(Phi.getIncomingValueForBlock(PH), Check);
  // In the copy, the checks cannot fail: they go, and the adds do not wrap.
  SmallVector<WeakTrackingVH, 8> Dead;
  for (const Counter &C : CL.Counters) {
    // A panic block outside the loop is the copy's too.
    bool Own = L->contains(C.RB.R);
    ReportBlock Copy = {
        Own ? cast<BasicBlock>(VM[C.RB.R]) : C.RB.R,
        cast<BasicBlock>(VM[C.RB.P]), cast<BasicBlock>(VM[C.RB.C]),
        Own ? cast<CallBase>(VM[C.RB.Call]) : C.RB.Call, C.RB.OnTrue};
    dropCheck(Copy, cast<Instruction>(VM[C.Sum]),
              C.WO ? cast<WithOverflowInst>(VM[C.WO]) : nullptr, Dead);
  }
  RecursivelyDeleteTriviallyDeadInstructionsPermissive(Dead);
}

} // namespace

PreservedAnalyses GuardCountersPass::run(Function &F,
                                         FunctionAnalysisManager &AM) {
  // Versioning copies the loop: not where code size comes first. No other
  // analysis is asked for a function none of whose innermost loops ends a
  // block with a check.
  if (F.hasOptSize())
    return PreservedAnalyses::all();
  LoopInfo &Loops = AM.getResult<LoopAnalysis>(F);
  if (none_of(Loops.getLoopsInPreorder(), [](Loop *L) {
        ReportBlock RB;
        return L->isInnermost() && any_of(L->blocks(), [&](BasicBlock *BB) {
                 return matchCheck(BB, L, RB);
               });
      }))
    return PreservedAnalyses::all();
  bool Changed = false;
  // One loop at a time, with fresh analyses: versioning changes the CFG.
  for (bool Found = true; Found;) {
    Found = false;
    auto &LI = AM.getResult<LoopAnalysis>(F);
    auto &SE = AM.getResult<ScalarEvolutionAnalysis>(F);
    auto &DT = AM.getResult<DominatorTreeAnalysis>(F);
    auto &AA = AM.getResult<AAManager>(F);
    auto &AC = AM.getResult<AssumptionAnalysis>(F);
    for (Loop *L : LI.getLoopsInPreorder()) {
      CounterLoop CL;
      if (!planCounters(L, LI, SE, AA, CL))
        continue;
      // A preheader and dedicated exits, which SimplifyCFG may have folded
      // away since LoopSimplify ran, and a count that can be computed there.
      // Planned again after that: a dedicated exit may now stand between
      // a check and its panic block.
      if (!L->isLoopSimplifyForm()) {
        simplifyLoop(L, &DT, &LI, &SE, &AC, nullptr, false);
        Changed = true;
        CL = CounterLoop();
        if (!planCounters(L, LI, SE, AA, CL)) {
          addStringMetadataToLoop(L, "rustc.overflow.counters");
          continue;
        }
      }
      if (!L->isLoopSimplifyForm() ||
          !SCEVExpander(SE, "counters")
               .isSafeToExpandAt(CL.BTC,
                                 L->getLoopPreheader()->getTerminator())) {
        addStringMetadataToLoop(L, "rustc.overflow.counters");
        Changed = true;
        continue;
      }
      guardCounters(F, L, CL, LI, SE, DT);
      Changed = Found = true;
      break;
    }
    if (Found)
      AM.invalidate(F, PreservedAnalyses::none());
  }
  return Changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}
