// Prototype: version the loops of report mode. The hot copy leaves to a cold
// copy of the loop at a failed check's report, so that in the hot copy no
// check ever failed (as in panic mode).
#include <functional>
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/Analysis/ScalarEvolutionExpressions.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Plugins/PassPlugin.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/SSAUpdater.h"
#include "llvm/Transforms/Utils/ValueMapper.h"
#include "llvm/Support/raw_ostream.h"
using namespace llvm;
namespace {
const char *ColdAttr = "rustc-overflow-report-cold";
bool isReportFn(const Function *F) {
  return F && F->hasFnAttribute("rustc-overflow-report");
}
static unsigned MaxInsts() {
  const char *E = getenv("COLD_MAX");
  return E ? atoi(E) : 1000;
}
// Report blocks of L whose continuation is in L: (R, C).
bool reportEdges(Loop *L, SmallVectorImpl<std::pair<BasicBlock *, BasicBlock *>> &Out, unsigned &Size) {
  Size = 0;
  for (BasicBlock *BB : L->blocks()) {
    if (BB->hasAddressTaken() || BB->isEHPad())
      return false;
    Size += BB->size();
    for (Instruction &I : *BB) {
      if (isa<AllocaInst>(I) || I.getType()->isTokenTy())
        return false;
      auto *CB = dyn_cast<CallBase>(&I);
      if (!CB)
        continue;
      if (CB->isConvergent() || isa<CallBrInst>(CB))
        return false;
      if (!isReportFn(CB->getCalledFunction()))
        continue;
      if (CB->getAttributes().hasFnAttr(ColdAttr))
        return false;
      BasicBlock *C = nullptr;
      if (auto *II = dyn_cast<InvokeInst>(CB))
        C = II->getNormalDest();
      else if (auto *Br = dyn_cast<BranchInst>(BB->getTerminator()))
        if (Br->isUnconditional())
          C = Br->getSuccessor(0);
      if (C && L->contains(C) && CB->getParent() == BB &&
          (isa<InvokeInst>(CB) || BB->getTerminator() == CB->getNextNode()))
        Out.push_back({BB, C});
    }
  }
  return !Out.empty();
}

void version(Loop *L, ArrayRef<std::pair<BasicBlock *, BasicBlock *>> Edges,
             Function &F) {
  LLVMContext &Ctx = F.getContext();
  ValueToValueMapTy VM;
  SmallVector<BasicBlock *, 16> Hot(L->blocks().begin(), L->blocks().end());
  SmallPtrSet<BasicBlock *, 16> HotSet(Hot.begin(), Hot.end());
  SmallVector<BasicBlock *, 16> Cold;
  for (BasicBlock *BB : Hot) {
    BasicBlock *NB = CloneBasicBlock(BB, VM, ".cold", &F);
    VM[BB] = NB;
    Cold.push_back(NB);
  }
  remapInstructionsInBlocks(Cold, VM);
  SmallPtrSet<BasicBlock *, 16> ColdSet(Cold.begin(), Cold.end());
  for (BasicBlock *NB : Cold)
    for (Instruction &I : *NB)
      if (auto *CB = dyn_cast<CallBase>(&I))
        if (isReportFn(CB->getCalledFunction()))
          CB->addFnAttr(Attribute::get(Ctx, ColdAttr));
  // The cold header is entered only from the cold latches (and hot reports).
  for (PHINode &Phi : cast<BasicBlock>(VM[L->getHeader()])->phis())
    for (int I = Phi.getNumIncomingValues() - 1; I >= 0; --I)
      if (!ColdSet.count(Phi.getIncomingBlock(I)))
        Phi.removeIncomingValue(I, false);
  // Exit blocks get the cold exiting blocks' incoming values.
  SmallPtrSet<BasicBlock *, 8> Exits;
  for (BasicBlock *BB : Hot)
    for (BasicBlock *S : successors(BB))
      if (!HotSet.count(S))
        Exits.insert(S);
  for (BasicBlock *E : Exits)
    for (PHINode &Phi : E->phis()) {
      unsigned N = Phi.getNumIncomingValues();
      for (unsigned I = 0; I < N; ++I) {
        BasicBlock *In = Phi.getIncomingBlock(I);
        if (!HotSet.count(In))
          continue;
        Value *V = Phi.getIncomingValue(I);
        auto It = VM.find(V);
        Phi.addIncoming(It != VM.end() ? (Value *)It->second : V,
                        cast<BasicBlock>(VM[In]));
      }
    }
  // A failed check in the hot copy reports and goes on in the cold copy.
  for (auto [R, C] : Edges) {
    auto *C2 = cast<BasicBlock>(VM[C]);
    for (PHINode &Phi : C->phis()) {
      auto *Phi2 = cast<PHINode>(VM[&Phi]);
      Phi2->addIncoming(Phi.getIncomingValueForBlock(R), R);
      Phi.removeIncomingValue(R, false);
    }
    R->getTerminator()->replaceSuccessorWith(C, C2);
    for (Instruction &I : *R)
      if (auto *CB = dyn_cast<CallBase>(&I))
        if (isReportFn(CB->getCalledFunction()))
          CB->addFnAttr(Attribute::get(Ctx, "rustc-overflow-report-leaves"));
  }
  // Cold loops: not unrolled, not vectorized.
  SmallVector<Loop *, 4> Work{L};
  while (!Work.empty()) {
    Loop *X = Work.pop_back_val();
    Work.append(X->begin(), X->end());
    SmallVector<BasicBlock *, 2> Latches;
    X->getLoopLatches(Latches);
    for (BasicBlock *Latch : Latches) {
      auto *T = cast<BasicBlock>(VM[Latch])->getTerminator();
      SmallVector<Metadata *, 4> Ops{nullptr};
      Ops.push_back(MDNode::get(Ctx, MDString::get(Ctx, "llvm.loop.unroll.disable")));
      Ops.push_back(MDNode::get(
          Ctx, {MDString::get(Ctx, "llvm.loop.vectorize.enable"),
                ConstantAsMetadata::get(ConstantInt::getFalse(Ctx))}));
      MDNode *ID = MDNode::getDistinct(Ctx, Ops);
      ID->replaceOperandWith(0, ID);
      T->setMetadata(LLVMContext::MD_loop, ID);
    }
  }
  // SSA: every value of the loop now has two definitions.
  SmallVector<Instruction *, 64> Defs;
  for (BasicBlock *BB : Hot)
    for (Instruction &I : *BB)
      if (!I.getType()->isVoidTy())
        Defs.push_back(&I);
  for (Instruction *IP : Defs) {
      Instruction &I = *IP;
      BasicBlock *BB = I.getParent();
      auto *I2 = cast<Instruction>(VM[&I]);
      SmallVector<Use *, 8> Uses;
      auto Where = [](Use &U) {
        auto *UI = cast<Instruction>(U.getUser());
        if (auto *P = dyn_cast<PHINode>(UI))
          return P->getIncomingBlock(U);
        return UI->getParent();
      };
      for (Use &U : I.uses()) {
        BasicBlock *W = Where(U);
        if (!HotSet.count(W))
          Uses.push_back(&U);
      }
      for (Use &U : I2->uses()) {
        BasicBlock *W = Where(U);
        if (W == I2->getParent() && !isa<PHINode>(U.getUser()))
          continue;
        Uses.push_back(&U);
      }
      if (Uses.empty())
        continue;
      SSAUpdater SSA;
      SSA.Initialize(I.getType(), I.getName());
      SSA.AddAvailableValue(BB, &I);
      SSA.AddAvailableValue(I2->getParent(), I2);
      for (Use *U : Uses)
        SSA.RewriteUse(*U);
    }
}

// Would panic mode learn something from this check for the rest of the loop?
// Yes if its operands are loop-invariant (it cannot fail later once it held),
// or if it is on an induction variable with a constant start and step and a
// constant bound, and fails within a few iterations (it bounds the trip count
// so that the loop unrolls completely).
bool teaches(BasicBlock *R, Loop *L, ScalarEvolution &SE) {
  BasicBlock *P = R->getSinglePredecessor();
  if (!P)
    return false;
  auto *Br = dyn_cast<BranchInst>(P->getTerminator());
  if (!Br || !Br->isConditional())
    return false;
  bool OnTrue = Br->getSuccessor(0) == R;
  Value *Cond = Br->getCondition();
  Value *A, *B;
  std::function<bool(const APInt &, const APInt &)> Fails;
  if (auto *EV = dyn_cast<ExtractValueInst>(Cond)) {
    auto *WO = dyn_cast<WithOverflowInst>(EV->getAggregateOperand());
    if (!WO || EV->getIndices()[0] != 1)
      return false;
    A = WO->getLHS();
    B = WO->getRHS();
    Intrinsic::ID ID = WO->getIntrinsicID();
    Fails = [ID](const APInt &X, const APInt &Y) {
      bool O = false;
      switch (ID) {
      case Intrinsic::uadd_with_overflow: (void)X.uadd_ov(Y, O); break;
      case Intrinsic::sadd_with_overflow: (void)X.sadd_ov(Y, O); break;
      case Intrinsic::usub_with_overflow: (void)X.usub_ov(Y, O); break;
      case Intrinsic::ssub_with_overflow: (void)X.ssub_ov(Y, O); break;
      case Intrinsic::umul_with_overflow: (void)X.umul_ov(Y, O); break;
      case Intrinsic::smul_with_overflow: (void)X.smul_ov(Y, O); break;
      default: break;
      }
      return O;
    };
  } else if (auto *Cmp = dyn_cast<ICmpInst>(Cond)) {
    A = Cmp->getOperand(0);
    B = Cmp->getOperand(1);
    CmpInst::Predicate Pred = Cmp->getPredicate();
    Fails = [Pred, OnTrue](const APInt &X, const APInt &Y) {
      return ICmpInst::compare(X, Y, Pred) == OnTrue;
    };
  } else {
    return false;
  }
  if (!SE.isSCEVable(A->getType()))
    return false;
  const SCEV *SA = SE.getSCEV(A), *SB = SE.getSCEV(B);
  if (SE.isLoopInvariant(SA, L) && SE.isLoopInvariant(SB, L))
    return true;
  auto Iv = [&](const SCEV *S, APInt &Start, APInt &Step) {
    auto *AR = dyn_cast<SCEVAddRecExpr>(S);
    if (!AR || AR->getLoop() != L || !AR->isAffine())
      return false;
    auto *C0 = dyn_cast<SCEVConstant>(AR->getStart());
    auto *C1 = dyn_cast<SCEVConstant>(AR->getStepRecurrence(SE));
    if (!C0 || !C1)
      return false;
    Start = C0->getAPInt();
    Step = C1->getAPInt();
    return true;
  };
  APInt Start, Step;
  auto *K = dyn_cast<SCEVConstant>(SB);
  bool Swap = false;
  if (!K || !Iv(SA, Start, Step)) {
    K = dyn_cast<SCEVConstant>(SA);
    Swap = true;
    if (!K || !Iv(SB, Start, Step))
      return false;
  }
  APInt X = Start;
  for (unsigned I = 0; I < 16; ++I, X += Step)
    if (Swap ? Fails(K->getAPInt(), X) : Fails(X, K->getAPInt()))
      return true;
  return false;
}

bool versioned(Loop *L) {
  SmallVector<BasicBlock *, 4> Ex;
  L->getExitBlocks(Ex);
  return any_of(Ex, [](BasicBlock *E) {
    return any_of(*E, [](Instruction &I) {
      auto *CB = dyn_cast<CallBase>(&I);
      return CB && CB->getAttributes().hasFnAttr("rustc-overflow-report-leaves");
    });
  });
}
void walk(Loop *L, Function &F, bool &Changed, ScalarEvolution &SE) {
  SmallVector<std::pair<BasicBlock *, BasicBlock *>, 4> Edges;
  unsigned Size;
  if (reportEdges(L, Edges, Size) && Size <= MaxInsts() &&
      (getenv("COLD_ALL") || isa<SCEVCouldNotCompute>(SE.getSymbolicMaxBackedgeTakenCount(L)) || versioned(L)) &&
      !(getenv("COLD_SKIP") && F.getName().contains(getenv("COLD_SKIP")))) {
    if (getenv("COLD_DEBUG"))
      errs() << "cold: " << F.getName() << " loop " << L->getHeader()->getName() << " size " << Size << " reports " << Edges.size() << "\n";
    version(L, Edges, F);
    Changed = true;
    return;
  }
  for (Loop *S : *L)
    walk(S, F, Changed, SE);
}

struct ColdPass : PassInfoMixin<ColdPass> {
  PreservedAnalyses run(Function &F, FunctionAnalysisManager &AM) {
    if (none_of(instructions(F), [](Instruction &I) {
          auto *CB = dyn_cast<CallBase>(&I);
          return CB && isReportFn(CB->getCalledFunction()) &&
                 !CB->getAttributes().hasFnAttr(ColdAttr);
        }))
      return PreservedAnalyses::all();
    auto &LI = AM.getResult<LoopAnalysis>(F);
    auto &SE = AM.getResult<ScalarEvolutionAnalysis>(F);
    SmallVector<Loop *, 4> Top(LI.begin(), LI.end());
    bool Changed = false;
    for (Loop *L : Top)
      walk(L, F, Changed, SE);
    return Changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }
};
} // namespace
extern "C" LLVM_ATTRIBUTE_WEAK ::llvm::PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "cold", "0", [](PassBuilder &PB) {
    PB.registerPeepholeEPCallback([](FunctionPassManager &FPM, OptimizationLevel) {
      if (!getenv("COLD_OFF")) FPM.addPass(ColdPass());
    });
  }};
}
