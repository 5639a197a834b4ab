// A prototype, loaded with -Zllvm-plugins (not part of the rustc series): in report mode,
// version a loop whose only checks are counters in a small array, `counts[i] += C`, on one
// bound. Before the loop, scan the array for its largest element m; if m + C * (the loop's
// maximum number of iterations) cannot overflow, no check of this run can fail, and the loop
// runs in a copy without its checks (which LLVM may then unroll); else the loop as it was.
// Nothing observable changes: a report that cannot happen is dropped, as in rustc patch 9.
//
// Conditions: an innermost loop with a preheader, one latch and dedicated exits, whose
// symbolic maximum backedge-taken count SCEV can compute; every report call in it checks the
// unsigned add `*p + C` of a value `*p` loaded in the loop, stores the sum back to `p`, and
// every `p` points into one object: a `noalias` `dereferenceable(K)` argument or an alloca of
// K bytes, at most 65536 elements; the loop calls nothing but its reports and harmless
// intrinsics, and every other store in it provably does not alias the object.
#include "MergeOverflowReports.cpp"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Plugins/PassPlugin.h"

using namespace llvm;

namespace {

struct Counter {
  ReportBlock RB;
  LoadInst *Old;
  Instruction *Sum; // the add, or the with.overflow's extractvalue 0
  WithOverflowInst *WO;
  uint64_t C;
};

// `Sum` is `Old + C` (an add, or extractvalue 0 of uadd.with.overflow(Old, C)), and the
// report is taken exactly when it wraps.
bool matchCounter(const ReportBlock &RB, Counter &Out) {
  using namespace PatternMatch;
  Value *Cond = cast<BranchInst>(RB.P->getTerminator())->getCondition();
  Value *Old = nullptr;
  APInt CV;
  Out.WO = nullptr;
  Out.Sum = nullptr;
  if (auto *EV = dyn_cast<ExtractValueInst>(Cond)) {
    auto *WO = dyn_cast<WithOverflowInst>(EV->getAggregateOperand());
    if (!RB.OnTrue || EV->getIndices()[0] != 1 || !WO ||
        WO->getIntrinsicID() != Intrinsic::uadd_with_overflow)
      return false;
    const APInt *C;
    if (!match(WO->getArgOperand(1), m_APInt(C)))
      return false;
    CV = *C;
    Old = WO->getArgOperand(0);
    Out.WO = WO;
    for (User *U : WO->users())
      if (auto *E = dyn_cast<ExtractValueInst>(U))
        if (E->getIndices()[0] == 0)
          Out.Sum = E;
  } else {
    // InstCombine's forms: `Old == -1` for C = 1, `Old > MAX - C`.
    CmpPredicate Pred;
    const APInt *K;
    if (!match(Cond, m_ICmp(Pred, m_Value(Old), m_APInt(K))))
      return false;
    if (!RB.OnTrue)
      Pred = CmpInst::getInversePredicate(Pred);
    APInt Max = APInt::getMaxValue(K->getBitWidth());
    if (Pred == ICmpInst::ICMP_EQ && K->isAllOnes())
      CV = APInt(K->getBitWidth(), 1);
    else if (Pred == ICmpInst::ICMP_UGT && !K->isAllOnes())
      CV = Max - *K;
    else
      return false;
    for (User *U : Old->users())
      if (match(U, m_Add(m_Specific(Old), m_SpecificInt(CV))))
        Out.Sum = cast<Instruction>(U);
  }
  auto *LI = dyn_cast<LoadInst>(Old);
  if (!LI || !LI->isSimple() || !Out.Sum || CV.isZero() || CV.getActiveBits() > 32)
    return false;
  Out.RB = RB;
  Out.Old = LI;
  Out.C = CV.getZExtValue();
  return true;
}

// The object every counter points into, and its size in bytes.
std::optional<std::pair<Value *, uint64_t>> counterObject(ArrayRef<Counter> Cs, Loop *L) {
  Value *Obj = nullptr;
  for (const Counter &C : Cs) {
    Value *O = getUnderlyingObject(C.Old->getPointerOperand());
    if (Obj && O != Obj)
      return std::nullopt;
    Obj = O;
  }
  uint64_t Size = 0;
  if (auto *A = dyn_cast<Argument>(Obj)) {
    if (!A->hasNoAliasAttr())
      return std::nullopt;
    Size = A->getDereferenceableBytes();
  } else if (auto *AI = dyn_cast<AllocaInst>(Obj)) {
    if (auto S = AI->getAllocationSize(AI->getDataLayout()); S && !S->isScalable())
      Size = S->getFixedValue();
  }
  if (!Size)
    return std::nullopt;
  return std::make_pair(Obj, Size);
}

bool planLoop(Loop *L, AAResults &AA, SmallVectorImpl<Counter> &Cs, Value *&Obj,
              uint64_t &Elems, Type *&EltTy) {
  if (!L->isInnermost() || !L->getLoopLatch() ||
      findStringMetadataForLoop(L, "rustc.overflow.guarded"))
    return false;
  SmallVector<StoreInst *, 4> Stores;
  for (BasicBlock *BB : L->blocks()) {
    ReportBlock RB;
    if (matchReport(BB, L, RB)) {
      Counter C;
      if (!matchCounter(RB, C))
        return false;
      Cs.push_back(C);
      continue;
    }
    for (Instruction &I : *BB) {
      if (auto *CB = dyn_cast<CallBase>(&I)) {
        if (isReportCall(I) || !harmlessIntrinsic(*CB))
          return false;
      } else if (auto *S = dyn_cast<StoreInst>(&I)) {
        Stores.push_back(S);
      } else if (I.mayWriteToMemory()) {
        return false;
      }
    }
  }
  if (Cs.empty())
    return false;
  auto O = counterObject(Cs, L);
  if (!O)
    return false;
  Obj = O->first;
  EltTy = Cs[0].Old->getType();
  const DataLayout &DL = L->getHeader()->getDataLayout();
  uint64_t EltSize = DL.getTypeStoreSize(EltTy);
  if (O->second % EltSize || O->second / EltSize > 65536)
    return false;
  Elems = O->second / EltSize;
  for (const Counter &C : Cs)
    if (C.Old->getType() != EltTy)
      return false;
  // Every store writes a counter's sum back to it, or does not touch the object.
  MemoryLocation ObjLoc(Obj, LocationSize::precise(O->second));
  for (StoreInst *S : Stores) {
    bool IsCounter = any_of(Cs, [&](const Counter &C) {
      return S->getPointerOperand() == C.Old->getPointerOperand() &&
             S->getValueOperand() == C.Sum && S->isSimple();
    });
    if (!IsCounter && !AA.isNoAlias(MemoryLocation::get(S), ObjLoc))
      return false;
  }
  return true;
}

struct GuardCountersPass : PassInfoMixin<GuardCountersPass> {
  PreservedAnalyses run(Function &F, FunctionAnalysisManager &AM) {
    if (none_of(instructions(F), isReportCall))
      return PreservedAnalyses::all();
    bool Changed = false;
    for (unsigned Round = 0; Round < 8; ++Round) {
      auto &LI = AM.getResult<LoopAnalysis>(F);
      auto &SE = AM.getResult<ScalarEvolutionAnalysis>(F);
      auto &DT = AM.getResult<DominatorTreeAnalysis>(F);
      auto &AA = AM.getResult<AAManager>(F);
      auto &AC = AM.getResult<AssumptionAnalysis>(F);
      Loop *L = nullptr;
      SmallVector<Counter, 4> Cs;
      Value *Obj = nullptr;
      uint64_t Elems = 0;
      Type *EltTy = nullptr;
      const SCEV *BTC = nullptr;
      for (Loop *Cand : LI.getLoopsInPreorder()) {
        Cs.clear();
        if (!planLoop(Cand, AA, Cs, Obj, Elems, EltTy))
          continue;
        // A preheader and dedicated exits (SimplifyCFG may have folded them away).
        if (!Cand->isLoopSimplifyForm()) {
          simplifyLoop(Cand, &DT, &LI, &SE, &AC, nullptr, false);
          Changed = true;
          if (!Cand->isLoopSimplifyForm())
            continue;
        }
        BTC = SE.getSymbolicMaxBackedgeTakenCount(Cand);
        if (isa<SCEVCouldNotCompute>(BTC) || !SCEVExpander(SE, "guard").isSafeToExpand(BTC) ||
            SE.getTypeSizeInBits(BTC->getType()) > 64)
          continue;
        L = Cand;
        break;
      }
      if (!L)
        break;
      guard(F, L, Cs, Obj, Elems, EltTy, BTC, LI, SE, DT);
      Changed = true;
      AM.invalidate(F, PreservedAnalyses::none());
    }
    return Changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }

  void guard(Function &F, Loop *L, ArrayRef<Counter> Cs, Value *Obj, uint64_t Elems,
             Type *EltTy, const SCEV *BTC, LoopInfo &LI, ScalarEvolution &SE,
             DominatorTree &DT) {
    LLVMContext &Ctx = F.getContext();
    formLCSSA(*L, DT, &LI, &SE);
    BasicBlock *PH = L->getLoopPreheader();
    BasicBlock *Header = L->getHeader();
    // The loop's maximum number of header runs, and what the counters add in that many.
    SCEVExpander Exp(SE, "guard");
    Value *Runs = Exp.expandCodeFor(BTC, BTC->getType(), PH->getTerminator());
    uint64_t Step = 0;
    for (const Counter &C : Cs)
      Step += C.C;
    // Original loop: the fallback; its clone: the guarded copy without checks.
    BasicBlock *SlowPH = SplitEdge(PH, Header, &DT, &LI);
    SmallVector<BasicBlock *, 16> Blocks;
    ValueToValueMapTy VM;
    Loop *Fast = cloneLoopWithPreheader(SlowPH, PH, L, VM, ".guarded", &LI, &DT, Blocks);
    remapInstructionsInBlocks(Blocks, VM);
    BasicBlock *FastPH = cast<BasicBlock>(VM[SlowPH]);
    SmallVector<BasicBlock *, 4> Exits;
    L->getExitBlocks(Exits);
    for (BasicBlock *E : Exits)
      for (PHINode &Phi : E->phis())
        for (unsigned I = 0, N = Phi.getNumIncomingValues(); I < N; ++I) {
          BasicBlock *From = Phi.getIncomingBlock(I);
          if (!L->contains(From))
            continue;
          Value *V = Phi.getIncomingValue(I);
          auto It = VM.find(V);
          Phi.addIncoming(It == VM.end() ? V : (Value *)It->second,
                          cast<BasicBlock>(VM[From]));
        }
    addStringMetadataToLoop(L, "rustc.overflow.guarded");
    // PH: scan the counters for their largest value, then choose the copy.
    Instruction *PHTerm = PH->getTerminator();
    BasicBlock *Scan = BasicBlock::Create(Ctx, "guard.scan", &F, SlowPH);
    BasicBlock *Check = BasicBlock::Create(Ctx, "guard.check", &F, SlowPH);
    if (Loop *Parent = L->getParentLoop()) {
      Parent->addBasicBlockToLoop(Scan, LI);
      Parent->addBasicBlockToLoop(Check, LI);
    }
    // The scan costs about as much as as many iterations of the loop save: shorter
    // runs go to the loop with its checks directly.
    IRBuilder<> PB(PHTerm);
    Value *Long = PB.CreateICmpUGE(Runs, ConstantInt::get(Runs->getType(), Elems));
    PB.CreateCondBr(Long, Scan, SlowPH);
    PHTerm->eraseFromParent();
    IRBuilder<> SB(Scan);
    Type *IdxTy = Type::getInt64Ty(Ctx);
    PHINode *Idx = SB.CreatePHI(IdxTy, 2, "guard.i");
    PHINode *Max = SB.CreatePHI(EltTy, 2, "guard.max");
    Idx->addIncoming(ConstantInt::get(IdxTy, 0), PH);
    Max->addIncoming(ConstantInt::get(EltTy, 0), PH);
    Value *Elt = SB.CreateLoad(EltTy, SB.CreateInBoundsGEP(EltTy, Obj, Idx), "guard.elt");
    Value *NextMax = SB.CreateBinaryIntrinsic(Intrinsic::umax, Max, Elt);
    Value *NextIdx = SB.CreateNUWAdd(Idx, ConstantInt::get(IdxTy, 1));
    Idx->addIncoming(NextIdx, Scan);
    Max->addIncoming(NextMax, Scan);
    SB.CreateCondBr(SB.CreateICmpEQ(NextIdx, ConstantInt::get(IdxTy, Elems)), Check, Scan);
    // Room: MAX - m >= Step * (Runs + 1), in 128 bits (Runs < 2^64, Step < 2^38).
    IRBuilder<> CB(Check);
    Type *Wide = Type::getInt128Ty(Ctx);
    unsigned Bits = EltTy->getIntegerBitWidth();
    Value *Room = CB.CreateSub(ConstantInt::get(Wide, APInt::getMaxValue(Bits).zext(128)),
                               CB.CreateZExt(NextMax, Wide));
    Value *Need = CB.CreateMul(CB.CreateAdd(CB.CreateZExt(Runs, Wide), ConstantInt::get(Wide, 1)),
                               ConstantInt::get(Wide, Step));
    MDBuilder MDB(Ctx);
    CB.CreateCondBr(CB.CreateICmpUGE(Room, Need), FastPH, SlowPH,
                    MDB.createLikelyBranchWeights());
    // FastPH, a copy of SlowPH, is entered from Check; SlowPH from PH and Check.
    for (PHINode &Phi : FastPH->phis())
      Phi.replaceIncomingBlockWith(PH, Check);
    for (PHINode &Phi : SlowPH->phis())
      Phi.addIncoming(Phi.getIncomingValueForBlock(PH), Check);
    // The copy's checks cannot fail: drop them, and its sums do not wrap.
    SmallVector<WeakTrackingVH, 8> Dead;
    for (const Counter &C : Cs) {
      auto *P = cast<BasicBlock>(VM[C.RB.P]);
      auto *R = cast<BasicBlock>(VM[C.RB.R]);
      auto *Cont = cast<BasicBlock>(VM[C.RB.C]);
      auto *Br = cast<BranchInst>(P->getTerminator());
      Dead.push_back(Br->getCondition());
      BranchInst::Create(Cont, Br->getIterator());
      Br->eraseFromParent();
      DeleteDeadBlock(R);
      auto *Sum = cast<Instruction>(VM[C.Sum]);
      if (auto *WO = dyn_cast<WithOverflowInst>(VM[C.WO ? (Value *)C.WO : C.Sum])) {
        IRBuilder<> B(WO);
        Instruction *Add = cast<Instruction>(
            B.CreateNUWAdd(WO->getArgOperand(0), WO->getArgOperand(1)));
        Add->takeName(Sum);
        Sum->replaceAllUsesWith(Add);
        Dead.push_back(Sum);
        Dead.push_back(WO);
      } else {
        Sum->setHasNoUnsignedWrap(true);
      }
    }
    RecursivelyDeleteTriviallyDeadInstructionsPermissive(Dead);
    (void)Fast;
  }
};

} // namespace

extern "C" LLVM_ATTRIBUTE_WEAK ::llvm::PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "guard-counters", "0", [](PassBuilder &PB) {
            PB.registerVectorizerStartEPCallback(
                [](FunctionPassManager &FPM, OptimizationLevel) {
                  FPM.addPass(GuardCountersPass());
                });
          }};
}
