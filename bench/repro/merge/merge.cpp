// Prototype: merge the overflow reports of -Coverflow-checks=report inside innermost loops
// into one report per site, made on every exit edge of the loop.
//
// Variant (env MERGE_VARIANT):
//   a  (default) pending flag + operands of the FIRST overflow   (select(pending, old, cur))
//   b            pending flag + operands of the LAST overflow    (select(ov, cur, old))
//   c            pending flag + operands of the final iteration  (store cur unconditionally)
//                -- NOT acceptable semantics (operands may not be an overflow at all);
//                   only an upper bound on speed.
//   d            pending flag only, operands passed as zeros -- NOT acceptable semantics either;
//                the upper bound once no operand value has to leave the loop.
//   e            operands of the FIRST overflow, kept without a select chain: the loop keeps
//                pending |= ov and first = umin(first, ov ? iteration : MAX) (both plain
//                reductions), and the exit recomputes the operands at iteration `first` by
//                cloning their backward slice, with each induction phi replaced by
//                start + first*step. Only for a site whose slice has no other loop-carried
//                value and loads no memory the loop may write; otherwise that site uses (a).
//   f            "flag + cold rescan": the loop keeps only pending |= ov per site (the same hot
//                loop as d). At each exit edge, for each site whose flag is set, a cold scalar loop
//                re-runs that site's check from iteration 0 (induction phis from their start values
//                and steps, loop invariants, loads of memory the loop does not write), stops at the
//                first iteration whose check fails and reports that iteration's operands. All
//                rescans of an exit run before any report call there (a handler cannot change what a
//                later rescan loads). Termination/bound: the check's block P must dominate the latch,
//                so every iteration before the one that set the flag ran P; the first failing
//                iteration of the rescan is therefore <= the first executed failing one, and the
//                rescan never runs an iteration the loop did not run. Sites that do not qualify
//                fall back to (a) (MERGE_DEBUG says why).
//   off          the pass does nothing (plugin loaded, for A/B)
// MERGE_DEBUG=1 prints one line per candidate loop to stderr.
//
// Registered at VectorizerStart (runs inside rustc's O2/O3 pipeline right before LoopVectorize,
// which re-forms LoopSimplify and LCSSA itself). Also available to opt as
// -passes=merge-overflow-reports.

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/LoopIterator.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Plugins/PassPlugin.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/PromoteMemToReg.h"
#include "llvm/Transforms/Utils/LoopSimplify.h"
#include "llvm/Analysis/AssumptionCache.h"
#include "llvm/Analysis/AliasAnalysis.h"
#include "llvm/Analysis/ScalarEvolutionExpressions.h"
#include "llvm/Transforms/Utils/ValueMapper.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include <cstdlib>
#include <string>

using namespace llvm;

namespace {

enum class Variant { First, Last, Final, FlagOnly, FirstRecompute, Rescan, Off };

Variant variant() {
  const char *V = getenv("MERGE_VARIANT");
  if (!V || !*V || !strcmp(V, "a")) return Variant::First;
  if (!strcmp(V, "b")) return Variant::Last;
  if (!strcmp(V, "c")) return Variant::Final;
  if (!strcmp(V, "d")) return Variant::FlagOnly;
  if (!strcmp(V, "e")) return Variant::FirstRecompute;
  if (!strcmp(V, "f")) return Variant::Rescan;
  return Variant::Off;
}
bool debug() { const char *D = getenv("MERGE_DEBUG"); return D && *D && *D != '0'; }

bool isReportFn(const Function *F) {
  if (!F) return false;
  StringRef N = F->getName();
  // v0 mangling: ...4core5panic8overflow<len>report_*overflow...
  return N.contains("8overflow") && N.contains("report_") && N.contains("overflow") &&
         !N.contains("report_integer_overflow");
}

struct ReportBlock {
  BasicBlock *R;      // the report block
  BasicBlock *P;      // its single predecessor (conditional branch)
  BasicBlock *C;      // continue block (R's only successor, P's other successor)
  CallBase *Call;     // call or invoke of the entry point
  bool OnTrue;        // P's branch goes to R when its condition is true
  unsigned Site;      // index into Sites
};

struct Site {
  Function *Callee;
  SmallVector<Value *, 4> ConstArgs; // nullptr for a non-constant argument
  CallBase *Proto;                   // call/invoke to clone at the exits
  BasicBlock *Unwind = nullptr;      // for invoke
  // lpad phi -> value to pass from a new invoke block
  SmallVector<std::pair<PHINode *, Value *>, 2> LpadPhis;
  AllocaInst *Flag = nullptr;
  // variant e
  bool Recompute = false;
  unsigned NumBlocks = 0;
  SmallVector<Instruction *, 8> Slice;                       // in program order
  SmallVector<std::tuple<PHINode *, Value *, APInt>, 2> IVs; // phi, start, step
  AllocaInst *First = nullptr;
  SmallVector<AllocaInst *, 4> Slots; // per argument, nullptr for constant ones
  // variant f
  bool Rescan = false;
  Value *Cond = nullptr;  // P's branch condition
  bool OnTrue = true;     // report when Cond is true
  SmallVector<std::tuple<PHINode *, Value *, Value *>, 2> RIVs; // phi, start, step (invariant)
};

struct Plan {
  Loop *L;
  SmallVector<ReportBlock, 4> Reports;
  SmallVector<Site, 4> Sites;
  SmallVector<std::pair<BasicBlock *, BasicBlock *>, 4> Exits;
  SmallVector<IntrinsicInst *, 4> WithOverflow; // *.with.overflow calls in the loop
};

bool expandEnabled() { const char *E = getenv("MERGE_EXPAND"); return !E || *E != '0'; }

// Replace {s,u}{add,sub,mul}.with.overflow by plain arithmetic and a compare: LoopVectorize
// cannot widen the struct-returning intrinsics ("call instruction cannot be vectorized").
void expandWithOverflow(IntrinsicInst *II) {
  IRBuilder<> B(II);
  Value *A = II->getArgOperand(0), *Bv = II->getArgOperand(1);
  auto *Ty = cast<IntegerType>(A->getType());
  Value *R = nullptr, *Ov = nullptr;
  Value *Zero = ConstantInt::get(Ty, 0);
  switch (II->getIntrinsicID()) {
  case Intrinsic::uadd_with_overflow:
    R = B.CreateAdd(A, Bv); Ov = B.CreateICmpULT(R, A); break;
  case Intrinsic::usub_with_overflow:
    R = B.CreateSub(A, Bv); Ov = B.CreateICmpULT(A, Bv); break;
  case Intrinsic::sadd_with_overflow:
    R = B.CreateAdd(A, Bv);
    Ov = B.CreateICmpSLT(B.CreateAnd(B.CreateXor(A, R), B.CreateXor(Bv, R)), Zero); break;
  case Intrinsic::ssub_with_overflow:
    R = B.CreateSub(A, Bv);
    Ov = B.CreateICmpSLT(B.CreateAnd(B.CreateXor(A, Bv), B.CreateXor(A, R)), Zero); break;
  case Intrinsic::umul_with_overflow:
  case Intrinsic::smul_with_overflow: {
    bool S = II->getIntrinsicID() == Intrinsic::smul_with_overflow;
    Type *W = IntegerType::get(II->getContext(), Ty->getBitWidth() * 2);
    Value *WA = S ? B.CreateSExt(A, W) : B.CreateZExt(A, W);
    Value *WB = S ? B.CreateSExt(Bv, W) : B.CreateZExt(Bv, W);
    Value *P = B.CreateMul(WA, WB);
    R = B.CreateTrunc(P, Ty);
    Ov = B.CreateICmpNE(S ? B.CreateSExt(R, W) : B.CreateZExt(R, W), P);
    break;
  }
  default:
    return;
  }
  for (User *U : make_early_inc_range(II->users()))
    if (auto *EV = dyn_cast<ExtractValueInst>(U)) {
      EV->replaceAllUsesWith(EV->getIndices()[0] == 0 ? R : Ov);
      EV->eraseFromParent();
    }
  if (!II->use_empty()) {
    Value *Agg = B.CreateInsertValue(PoisonValue::get(II->getType()), R, 0);
    Agg = B.CreateInsertValue(Agg, Ov, 1);
    II->replaceAllUsesWith(Agg);
  }
  II->eraseFromParent();
}

bool harmlessIntrinsic(const CallBase &CB) {
  if (auto *II = dyn_cast<IntrinsicInst>(&CB)) {
    switch (II->getIntrinsicID()) {
    case Intrinsic::assume:
    case Intrinsic::lifetime_start:
    case Intrinsic::lifetime_end:
    case Intrinsic::experimental_noalias_scope_decl:
    case Intrinsic::pseudoprobe:
    case Intrinsic::dbg_declare:
    case Intrinsic::dbg_value:
    case Intrinsic::dbg_label:
      return true;
    default:
      break;
    }
  }
  return false;
}

// Recognise a report block. Returns false if BB is not one.
bool matchReport(BasicBlock *BB, Loop *L, ReportBlock &Out) {
  Instruction *First = &*BB->getFirstNonPHIOrDbg();
  auto *CB = dyn_cast<CallBase>(First);
  if (!CB || !isReportFn(CB->getCalledFunction())) return false;
  if (isa<PHINode>(&BB->front())) return false;
  BasicBlock *C = nullptr;
  if (auto *II = dyn_cast<InvokeInst>(CB)) {
    C = II->getNormalDest();
  } else {
    auto *Br = dyn_cast<BranchInst>(CB->getNextNode());
    if (!Br || Br->isConditional()) return false;
    C = Br->getSuccessor(0);
  }
  BasicBlock *P = BB->getSinglePredecessor();
  if (!P || !L->contains(P) || !L->contains(C)) return false;
  auto *PBr = dyn_cast<BranchInst>(P->getTerminator());
  if (!PBr || !PBr->isConditional()) return false;
  bool OnTrue;
  if (PBr->getSuccessor(0) == BB && PBr->getSuccessor(1) == C) OnTrue = true;
  else if (PBr->getSuccessor(1) == BB && PBr->getSuccessor(0) == C) OnTrue = false;
  else return false;
  Out = {BB, P, C, CB, OnTrue, 0};
  return true;
}


// variant e: can the operands of this site be recomputed from the iteration number?
bool planRecompute(Site &St, const ReportBlock &RB, Loop *L, LoopInfo &LI, ScalarEvolution &SE,
                   AAResults &AA, std::string &Why) {
  SmallPtrSet<Instruction *, 16> In;
  SmallVector<Instruction *, 16> Work;
  for (Value *V : RB.Call->args())
    if (auto *I = dyn_cast<Instruction>(V)) if (L->contains(I) && In.insert(I).second) Work.push_back(I);
  SmallVector<Instruction *, 8> Stores;
  for (BasicBlock *BB : L->blocks())
    for (Instruction &I : *BB)
      if (I.mayWriteToMemory() && !isa<CallBase>(I)) Stores.push_back(&I);
  while (!Work.empty()) {
    Instruction *I = Work.pop_back_val();
    if (auto *Phi = dyn_cast<PHINode>(I)) {
      auto *AR = dyn_cast<SCEVAddRecExpr>(SE.getSCEV(Phi));
      if (Phi->getParent() != L->getHeader() || !AR || AR->getLoop() != L || !AR->isAffine() ||
          !isa<SCEVConstant>(AR->getStepRecurrence(SE))) {
        Why = "operand depends on a loop-carried value"; return false;
      }
      St.IVs.push_back({Phi, Phi->getIncomingValueForBlock(L->getLoopPreheader()),
                        cast<SCEVConstant>(AR->getStepRecurrence(SE))->getAPInt()});
      continue; // not cloned
    }
    if (auto *Ld = dyn_cast<LoadInst>(I)) {
      if (!Ld->isSimple()) { Why = "volatile load"; return false; }
      MemoryLocation LL = MemoryLocation::getBeforeOrAfter(Ld->getPointerOperand());
      for (Instruction *S : Stores) {
        auto *SI = dyn_cast<StoreInst>(S);
        if (!SI || !AA.isNoAlias(LL, MemoryLocation::getBeforeOrAfter(SI->getPointerOperand()))) {
          Why = "operand loads memory the loop may write"; return false;
        }
      }
    } else if (auto *CB = dyn_cast<CallBase>(I)) {
      if (!isa<IntrinsicInst>(CB) || !CB->doesNotAccessMemory() || !CB->willReturn()) {
        Why = "operand from a call"; return false;
      }
    } else if (I->mayHaveSideEffects() || I->mayReadOrWriteMemory()) {
      Why = "operand from a side effect"; return false;
    }
    for (Value *Op : I->operands())
      if (auto *OI = dyn_cast<Instruction>(Op))
        if (L->contains(OI) && In.insert(OI).second) Work.push_back(OI);
  }
  LoopBlocksRPO RPO(L);
  RPO.perform(&LI);
  for (BasicBlock *BB : RPO)
    for (Instruction &I : *BB)
      if (In.count(&I) && !isa<PHINode>(I)) St.Slice.push_back(&I);
  return true;
}

// variant f: can this site's check be re-run from iteration 0 after the loop?
bool planRescan(Site &St, const ReportBlock &RB, Loop *L, LoopInfo &LI, ScalarEvolution &SE,
                AAResults &AA, DominatorTree &DT, const SmallPtrSetImpl<BasicBlock *> &ReportBBs,
                std::string &Why) {
  BasicBlock *Latch = L->getLoopLatch();
  if (!Latch) { Why = "no single latch"; return false; }
  // Every completed iteration must have run the check (see the header comment).
  if (!DT.dominates(RB.P, Latch)) { Why = "check block does not dominate the latch (conditional check)"; return false; }
  auto *Br = cast<BranchInst>(RB.P->getTerminator());
  St.Cond = Br->getCondition();
  St.OnTrue = RB.OnTrue;
  SmallPtrSet<Instruction *, 16> In;
  SmallVector<Instruction *, 16> Work;
  auto Add = [&](Value *V) {
    if (auto *I = dyn_cast<Instruction>(V))
      if (L->contains(I) && In.insert(I).second) Work.push_back(I);
  };
  Add(St.Cond);
  for (Value *V : RB.Call->args()) Add(V);
  // everything in the loop (report blocks excepted: they go away) that may write memory
  SmallVector<Instruction *, 8> Writers;
  for (BasicBlock *BB : L->blocks())
    if (!ReportBBs.count(BB))
      for (Instruction &I : *BB)
        if (I.mayWriteToMemory()) Writers.push_back(&I);
  while (!Work.empty()) {
    Instruction *I = Work.pop_back_val();
    if (auto *Phi = dyn_cast<PHINode>(I)) {
      if (Phi->getParent() != L->getHeader()) { Why = "operand depends on a non-header phi"; return false; }
      auto *AR = dyn_cast<SCEVAddRecExpr>(SE.getSCEV(Phi));
      if (!AR || AR->getLoop() != L || !AR->isAffine()) {
        Why = "operand depends on a loop-carried value (not an induction)"; return false;
      }
      const SCEV *Step = AR->getStepRecurrence(SE);
      Value *StepV = nullptr;
      if (auto *C = dyn_cast<SCEVConstant>(Step)) StepV = C->getValue();
      else if (auto *U = dyn_cast<SCEVUnknown>(Step))
        if (SE.isLoopInvariant(Step, L)) StepV = U->getValue();
      if (!StepV) { Why = "induction step not a constant or invariant value"; return false; }
      if (auto *SI = dyn_cast<Instruction>(StepV))
        if (!DT.dominates(SI, L->getHeader())) { Why = "induction step does not dominate the loop"; return false; }
      St.RIVs.push_back({Phi, Phi->getIncomingValueForBlock(L->getLoopPreheader()), StepV});
      continue; // replaced by a rescan phi, not cloned
    }
    if (auto *Ld = dyn_cast<LoadInst>(I)) {
      if (!Ld->isSimple()) { Why = "volatile/atomic load"; return false; }
      MemoryLocation LL = MemoryLocation::getBeforeOrAfter(Ld->getPointerOperand());
      for (Instruction *W : Writers)
        if (isModSet(AA.getModRefInfo(W, LL))) {
          Why = "operand loads memory the loop may write"; return false;
        }
    } else if (auto *CB = dyn_cast<CallBase>(I)) {
      if (!isa<IntrinsicInst>(CB) || !CB->doesNotAccessMemory() || !CB->willReturn()) {
        Why = "operand from a call"; return false;
      }
    } else if (isa<AllocaInst>(I) || I->mayHaveSideEffects() || I->mayReadOrWriteMemory() || I->isEHPad()) {
      Why = "operand from a side effect"; return false;
    }
    for (Value *Op : I->operands()) Add(Op);
  }
  LoopBlocksRPO RPO(L);
  RPO.perform(&LI);
  for (BasicBlock *BB : RPO)
    for (Instruction &I : *BB)
      if (In.count(&I) && !isa<PHINode>(I)) St.Slice.push_back(&I);
  return true;
}

bool analyse(Loop *L, LoopInfo &LI, ScalarEvolution &SE, AAResults &AA, DominatorTree &DT,
             Variant Var, Plan &Pl, std::string &Why) {
  Pl.L = L;
  if (!L->getLoopPreheader()) { Why = "no preheader"; return false; }
  // (1) termination: SCEV computes a symbolic max backedge-taken count.
  if (isa<SCEVCouldNotCompute>(SE.getSymbolicMaxBackedgeTakenCount(L))) {
    Why = "no computable symbolic max backedge-taken count"; return false;
  }
  // Program order of the sites: RPO of the loop body from the header.
  LoopBlocksRPO RPO(L);
  RPO.perform(&LI);
  SmallPtrSet<BasicBlock *, 8> ReportBBs;
  for (BasicBlock *BB : RPO) {
    ReportBlock RB;
    if (matchReport(BB, L, RB)) {
      // key the site by callee + constant arguments
      unsigned S = 0;
      for (; S < Pl.Sites.size(); ++S) {
        Site &St = Pl.Sites[S];
        if (St.Callee != RB.Call->getCalledFunction()) continue;
        bool Same = true;
        for (unsigned A = 0; A < RB.Call->arg_size(); ++A) {
          Value *V = RB.Call->getArgOperand(A);
          Value *K = isa<Constant>(V) ? V : nullptr;
          if (K != St.ConstArgs[A]) Same = false;
        }
        if (Same && isa<InvokeInst>(RB.Call) != isa<InvokeInst>(St.Proto)) Same = false;
        if (Same && isa<InvokeInst>(RB.Call) &&
            cast<InvokeInst>(RB.Call)->getUnwindDest() != St.Unwind) Same = false;
        if (Same) break;
      }
      if (S == Pl.Sites.size()) {
        Site St;
        St.Callee = RB.Call->getCalledFunction();
        for (Value *V : RB.Call->args()) St.ConstArgs.push_back(isa<Constant>(V) ? V : nullptr);
        St.Proto = RB.Call;
        if (auto *II = dyn_cast<InvokeInst>(RB.Call)) St.Unwind = II->getUnwindDest();
        Pl.Sites.push_back(St);
      }
      RB.Site = S;
      Pl.Sites[S].NumBlocks++;
      // continue block phis must agree on P and R (the program continues with the same value)
      for (PHINode &Phi : RB.C->phis())
        if (Phi.getIncomingValueForBlock(RB.P) != Phi.getIncomingValueForBlock(RB.R)) {
          Why = "continue-block phi differs between check and report"; return false;
        }
      if (auto *II = dyn_cast<InvokeInst>(RB.Call)) {
        BasicBlock *U = II->getUnwindDest();
        if (L->contains(U)) { Why = "report unwinds into the loop"; return false; }
        Site &St = Pl.Sites[S];
        for (PHINode &Phi : U->phis()) {
          Value *V = Phi.getIncomingValueForBlock(RB.R);
          if (auto *I = dyn_cast<Instruction>(V))
            if (L->contains(I)) { Why = "landing-pad phi takes a value defined in the loop"; return false; }
          bool Found = false;
          for (auto &[PN, PV] : St.LpadPhis)
            if (PN == &Phi) {
              Found = true;
              if (PV != V) { Why = "landing-pad phi differs between report blocks"; return false; }
            }
          if (!Found) St.LpadPhis.push_back({&Phi, V});
        }
      }
      Pl.Reports.push_back(RB);
      ReportBBs.insert(BB);
    }
  }
  if (Pl.Reports.empty()) { Why = "no report block"; return false; }
  // (2) nothing in the loop can observe when the handler runs.
  for (BasicBlock *BB : L->blocks()) {
    if (ReportBBs.count(BB)) continue;
    for (Instruction &I : *BB) {
      if (auto *CB = dyn_cast<CallBase>(&I)) {
        if (auto *WO = dyn_cast<WithOverflowInst>(CB)) Pl.WithOverflow.push_back(WO);
        if (CB->isInlineAsm()) { Why = "inline asm"; return false; }
        if (harmlessIntrinsic(*CB)) continue;
        if (isa<InvokeInst>(CB) || isa<CallBrInst>(CB)) { Why = "invoke/callbr"; return false; }
        if (!(CB->doesNotAccessMemory() && CB->doesNotThrow() && CB->willReturn())) {
          Why = "call to ";
          Why += CB->getCalledFunction() ? CB->getCalledFunction()->getName().str() : "<indirect>";
          return false;
        }
        continue;
      }
      if (auto *LI2 = dyn_cast<LoadInst>(&I)) {
        if (!LI2->isSimple()) { Why = "volatile/atomic load"; return false; }
      } else if (auto *SI = dyn_cast<StoreInst>(&I)) {
        if (!SI->isSimple()) { Why = "volatile/atomic store"; return false; }
      } else if (isa<FenceInst>(I) || isa<AtomicRMWInst>(I) || isa<AtomicCmpXchgInst>(I)) {
        Why = "fence/atomic"; return false;
      } else if (I.isEHPad()) {
        Why = "EH pad in loop"; return false;
      } else if (isa<MemIntrinsic>(I) && cast<MemIntrinsic>(I).isVolatile()) {
        Why = "volatile mem intrinsic"; return false;
      }
    }
  }
  // (3) every exit edge: collect them; EH-pad exits are allowed only from report invokes.
  for (BasicBlock *BB : L->blocks()) {
    for (BasicBlock *S : successors(BB)) {
      if (L->contains(S)) continue;
      if (ReportBBs.count(BB)) {
        auto *II = dyn_cast<InvokeInst>(BB->getTerminator());
        if (II && II->getUnwindDest() == S) continue; // goes away with the report
        Why = "report block exits the loop"; return false;
      }
      if (S->isEHPad()) { Why = "exit edge to an EH pad"; return false; }
      if (!isa<BranchInst>(BB->getTerminator()) && !isa<SwitchInst>(BB->getTerminator())) {
        Why = "exit from unusual terminator"; return false;
      }
      bool Dup = false;
      for (auto &E : Pl.Exits) if (E.first == BB && E.second == S) Dup = true;
      if (!Dup) Pl.Exits.push_back({BB, S});
    }
  }
  if (Var == Variant::FirstRecompute)
    for (ReportBlock &RB : Pl.Reports) {
      Site &St = Pl.Sites[RB.Site];
      std::string W;
      St.Recompute = St.NumBlocks == 1 && planRecompute(St, RB, L, LI, SE, AA, W);
      if (!St.Recompute) { St.Slice.clear(); St.IVs.clear(); }
      if (debug())
        errs() << "  site " << RB.Site << (St.Recompute ? ": recompute operands at exit\n"
                                                         : ": falls back to (a): " + W + "\n");
    }
  if (Var == Variant::Rescan)
    for (ReportBlock &RB : Pl.Reports) {
      Site &St = Pl.Sites[RB.Site];
      std::string W = "site has several report blocks";
      St.Rescan = St.NumBlocks == 1 && planRescan(St, RB, L, LI, SE, AA, DT, ReportBBs, W);
      if (!St.Rescan) { St.Slice.clear(); St.RIVs.clear(); }
      if (debug())
        errs() << "  site " << RB.Site << (St.Rescan ? ": flag + cold rescan at exits (" +
                                                          std::to_string(St.Slice.size()) + " insts, " +
                                                          std::to_string(St.RIVs.size()) + " IVs)\n"
                                                    : ": falls back to (a): " + W + "\n");
    }
  return true;
}

// Put a new block on the edge From->To (all parallel edges), return it.
BasicBlock *splitExit(BasicBlock *From, BasicBlock *To) {
  LLVMContext &Ctx = From->getContext();
  BasicBlock *N = BasicBlock::Create(Ctx, To->getName() + ".report", To->getParent(), To);
  BranchInst::Create(To, N);
  Instruction *T = From->getTerminator();
  for (unsigned I = 0; I < T->getNumSuccessors(); ++I)
    if (T->getSuccessor(I) == To) T->setSuccessor(I, N);
  for (PHINode &Phi : To->phis()) {
    Value *V = Phi.getIncomingValueForBlock(From);
    while (Phi.getBasicBlockIndex(From) >= 0)
      Phi.removeIncomingValue(From, /*DeletePHIIfEmpty=*/false);
    Phi.addIncoming(V, N);
  }
  return N;
}

void transform(Plan &Pl, Function &F, Variant Var, SmallVectorImpl<AllocaInst *> &Allocas) {
  const DataLayout &DL = F.getDataLayout();
  BasicBlock &Entry = F.getEntryBlock();
  IRBuilder<> EB(&Entry, Entry.getFirstInsertionPt());
  LLVMContext &Ctx = F.getContext();
  Type *I1 = Type::getInt1Ty(Ctx);
  BasicBlock *PH = Pl.L->getLoopPreheader();
  IRBuilder<> PB(PH->getTerminator());
  Type *I64 = Type::getInt64Ty(Ctx);
  AllocaInst *Iter = nullptr;
  Value *K = nullptr; // iteration number in the loop
  for (Site &S : Pl.Sites)
    if (S.Recompute && !Iter) {
      Iter = EB.CreateAlloca(I64, nullptr, "ovf.iter");
      Allocas.push_back(Iter);
      PB.CreateStore(ConstantInt::get(I64, 0), Iter);
      IRBuilder<> HB(&*Pl.L->getHeader()->getFirstInsertionPt());
      K = HB.CreateLoad(I64, Iter, "ovf.k");
      HB.CreateStore(HB.CreateAdd(K, ConstantInt::get(I64, 1), "ovf.k.next", true, true), Iter);
    }
  for (Site &S : Pl.Sites) {
    if (S.Recompute) {
      S.First = EB.CreateAlloca(I64, nullptr, "ovf.firstk");
      Allocas.push_back(S.First);
      PB.CreateStore(ConstantInt::getAllOnesValue(I64), S.First);
    }
    S.Flag = EB.CreateAlloca(I1, nullptr, "ovf.pending");
    Allocas.push_back(S.Flag);
    PB.CreateStore(ConstantInt::getFalse(Ctx), S.Flag);
    for (unsigned A = 0; A < S.ConstArgs.size(); ++A) {
      if (S.ConstArgs[A] || Var == Variant::FlagOnly || S.Recompute || S.Rescan) { S.Slots.push_back(nullptr); continue; }
      Type *Ty = S.Proto->getArgOperand(A)->getType();
      AllocaInst *Slot = EB.CreateAlloca(Ty, nullptr, "ovf.arg");
      Allocas.push_back(Slot);
      S.Slots.push_back(Slot);
      PB.CreateStore(Constant::getNullValue(Ty), Slot);
    }
  }
  (void)DL;
  // In the loop: accumulate, and drop the report block.
  for (ReportBlock &RB : Pl.Reports) {
    Site &S = Pl.Sites[RB.Site];
    auto *Br = cast<BranchInst>(RB.P->getTerminator());
    IRBuilder<> B(Br);
    Value *Ov = Br->getCondition();
    if (!RB.OnTrue) Ov = B.CreateNot(Ov, "ovf.bit");
    Value *Old = B.CreateLoad(I1, S.Flag, "ovf.old");
    B.CreateStore(B.CreateOr(Old, Ov, "ovf.new"), S.Flag);
    if (S.Recompute) {
      Value *M = B.CreateLoad(I64, S.First, "ovf.firstk.old");
      Value *Sel = B.CreateSelect(Ov, K, ConstantInt::getAllOnesValue(I64), "ovf.k.if");
      B.CreateStore(B.CreateBinaryIntrinsic(Intrinsic::umin, M, Sel, nullptr, "ovf.firstk.new"), S.First);
    }
    for (unsigned A = 0; A < S.Slots.size(); ++A) {
      AllocaInst *Slot = S.Slots[A];
      if (!Slot) continue;
      Value *Cur = RB.Call->getArgOperand(A);
      Value *New = Cur;
      if (Var == Variant::First || Var == Variant::FirstRecompute || Var == Variant::Rescan) {
        Value *Prev = B.CreateLoad(Slot->getAllocatedType(), Slot, "ovf.prev");
        New = B.CreateSelect(Old, Prev, Cur, "ovf.first");
      } else if (Var == Variant::Last) {
        Value *Prev = B.CreateLoad(Slot->getAllocatedType(), Slot, "ovf.prev");
        New = B.CreateSelect(Ov, Cur, Prev, "ovf.last");
      }
      B.CreateStore(New, Slot);
    }
    BranchInst::Create(RB.C, Br->getIterator());
    Br->eraseFromParent();
  }
  // Exits first (the report blocks are the prototypes for the cloned calls), then delete them.
  MDBuilder MDB(Ctx);
  for (auto &[From, To] : Pl.Exits) {
    BasicBlock *N = splitExit(From, To);
    // variant f, phase 1: every rescan of this exit, before any report call
    SmallVector<SmallVector<Value *, 4>, 4> RescanArgs(Pl.Sites.size());
    for (unsigned SI = 0; SI < Pl.Sites.size(); ++SI) {
      Site &S = Pl.Sites[SI];
      if (!S.Rescan) continue;
      IRBuilder<> B(N->getTerminator());
      Value *Pending = B.CreateLoad(I1, S.Flag, "ovf.pending.rescan");
      Instruction *ThenTerm = SplitBlockAndInsertIfThen(
          Pending, N->getTerminator()->getIterator(), false, MDB.createUnlikelyBranchWeights());
      BasicBlock *Then = ThenTerm->getParent();
      BasicBlock *Tail = ThenTerm->getSuccessor(0);
      BasicBlock *Hdr = BasicBlock::Create(Ctx, "ovf.rescan", &F, Tail);
      BasicBlock *Next = BasicBlock::Create(Ctx, "ovf.rescan.next", &F, Tail);
      BasicBlock *Found = BasicBlock::Create(Ctx, "ovf.rescan.found", &F, Tail);
      ThenTerm->setSuccessor(0, Hdr);
      IRBuilder<> HB(Hdr);
      ValueToValueMapTy VM;
      SmallVector<std::pair<PHINode *, Value *>, 2> NewIVs;
      for (auto &[Phi, Start, Step] : S.RIVs) {
        PHINode *P = HB.CreatePHI(Phi->getType(), 2, Phi->getName() + ".rescan");
        P->addIncoming(Start, Then);
        VM[Phi] = P;
        NewIVs.push_back({P, Step});
      }
      for (Instruction *I : S.Slice) {
        Instruction *C = I->clone();
        C->setName(I->getName() + ".rs");
        C->insertInto(Hdr, Hdr->end());
        RemapInstruction(C, VM, RF_IgnoreMissingLocals | RF_NoModuleLevelChanges);
        if (isa<LoadInst>(C)) { C->setMetadata(LLVMContext::MD_alias_scope, nullptr); C->setMetadata(LLVMContext::MD_noalias, nullptr); }
        VM[I] = C;
      }
      auto Map = [&](Value *V) -> Value * { auto It = VM.find(V); return It == VM.end() ? V : (Value *)It->second; };
      Value *Fail = Map(S.Cond);
      if (!S.OnTrue) Fail = HB.CreateNot(Fail, "ovf.rescan.fail");
      HB.CreateCondBr(Fail, Found, Next);
      IRBuilder<> NB(Next);
      for (auto &[P, Step] : NewIVs) {
        Value *Nx = P->getType()->isPointerTy()
                        ? NB.CreateGEP(Type::getInt8Ty(Ctx), P, Step, P->getName() + ".next")
                        : NB.CreateAdd(P, Step, P->getName() + ".next");
        P->addIncoming(Nx, Next);
      }
      NB.CreateBr(Hdr);
      BranchInst::Create(Tail, Found);
      IRBuilder<> TB(&*Tail->getFirstInsertionPt());
      RescanArgs[SI].resize(S.Proto->arg_size(), nullptr);
      for (unsigned A = 0; A < S.Proto->arg_size(); ++A) {
        if (S.ConstArgs[A]) continue;
        Value *V = Map(S.Proto->getArgOperand(A));
        PHINode *PN = TB.CreatePHI(V->getType(), 2, "ovf.rescan.arg");
        PN->addIncoming(PoisonValue::get(V->getType()), N);
        PN->addIncoming(V, Found);
        RescanArgs[SI][A] = PN;
      }
      N = Tail;
    }
    for (unsigned SI = 0; SI < Pl.Sites.size(); ++SI) {
      Site &S = Pl.Sites[SI];
      IRBuilder<> B(N->getTerminator());
      Value *Pending = B.CreateLoad(I1, S.Flag, "ovf.pending.exit");
      Instruction *ThenTerm = SplitBlockAndInsertIfThen(
          Pending, N->getTerminator()->getIterator(), false, MDB.createUnlikelyBranchWeights());
      BasicBlock *Then = ThenTerm->getParent();
      BasicBlock *Tail = ThenTerm->getSuccessor(0);
      CallBase *NC = cast<CallBase>(S.Proto->clone());
      NC->insertBefore(ThenTerm->getIterator());
      IRBuilder<> TB(NC);
      if (S.Recompute) {
        ValueToValueMapTy VM;
        Value *FK = TB.CreateLoad(I64, S.First, "ovf.firstk.exit");
        for (auto &[Phi, Start, Step] : S.IVs) {
          Value *V;
          if (Phi->getType()->isPointerTy()) {
            Value *Off = TB.CreateMul(FK, ConstantInt::get(I64, Step.sextOrTrunc(64)));
            V = TB.CreateGEP(Type::getInt8Ty(Ctx), Start, Off, "ovf.iv.at");
          } else {
            auto *T = cast<IntegerType>(Phi->getType());
            Value *KK = TB.CreateZExtOrTrunc(FK, T);
            V = TB.CreateAdd(Start, TB.CreateMul(KK, ConstantInt::get(T, Step.sextOrTrunc(T->getBitWidth()))), "ovf.iv.at");
          }
          VM[Phi] = V;
        }
        for (Instruction *I : S.Slice) {
          Instruction *C = I->clone();
          C->insertBefore(NC->getIterator());
          RemapInstruction(C, VM, RF_IgnoreMissingLocals | RF_NoModuleLevelChanges);
          VM[I] = C;
        }
        for (unsigned A = 0; A < NC->arg_size(); ++A)
          if (!S.ConstArgs[A]) NC->setArgOperand(A, VM.count(S.Proto->getArgOperand(A)) ? (Value *)VM[S.Proto->getArgOperand(A)] : S.Proto->getArgOperand(A));
      }
      if (S.Rescan)
        for (unsigned A = 0; A < NC->arg_size(); ++A)
          if (!S.ConstArgs[A]) NC->setArgOperand(A, RescanArgs[SI][A]);
      for (unsigned A = 0; A < S.Slots.size(); ++A)
        if (S.Recompute || S.Rescan) break;
        else if (!S.Slots[A] && !S.ConstArgs[A])
          NC->setArgOperand(A, Constant::getNullValue(NC->getArgOperand(A)->getType()));
        else if (S.Slots[A])
          NC->setArgOperand(A, TB.CreateLoad(S.Slots[A]->getAllocatedType(), S.Slots[A], "ovf.arg.exit"));
      if (auto *II = dyn_cast<InvokeInst>(NC)) {
        II->setNormalDest(Tail);
        ThenTerm->eraseFromParent();
        II->removeFromParent();
        II->insertInto(Then, Then->end());
        for (auto &[Phi, V] : S.LpadPhis) Phi->addIncoming(V, Then);
      }
      N = Tail;
    }
  }
  for (ReportBlock &RB : Pl.Reports) {
    RB.C->removePredecessor(RB.R);
    if (auto *II = dyn_cast<InvokeInst>(RB.Call)) II->getUnwindDest()->removePredecessor(RB.R);
    RB.R->dropAllReferences();
  }
  for (ReportBlock &RB : Pl.Reports) RB.R->eraseFromParent();
  if (expandEnabled())
    for (IntrinsicInst *II : Pl.WithOverflow) expandWithOverflow(II);
}

struct MergeOverflowReports : PassInfoMixin<MergeOverflowReports> {
  PreservedAnalyses run(Function &F, FunctionAnalysisManager &AM) {
    Variant Var = variant();
    if (Var == Variant::Off) return PreservedAnalyses::all();
    auto &LI = AM.getResult<LoopAnalysis>(F);
    auto &SE = AM.getResult<ScalarEvolutionAnalysis>(F);
    auto &DT0 = AM.getResult<DominatorTreeAnalysis>(F);
    auto &AC = AM.getResult<AssumptionAnalysis>(F);
    auto &AA = AM.getResult<AAManager>(F);
    SmallVector<Plan, 4> Plans;
    bool Simplified = false;
    for (Loop *L : LI.getLoopsInPreorder()) {
      if (!L->isInnermost()) continue;
      bool HasReport = false;
      for (BasicBlock *BB : L->blocks())
        for (Instruction &I : *BB)
          if (auto *CB = dyn_cast<CallBase>(&I))
            if (isReportFn(CB->getCalledFunction())) HasReport = true;
      if (!HasReport) continue;
      // LoopVectorize would do this anyway; we need a preheader and dedicated exits.
      Simplified |= simplifyLoop(L, &DT0, &LI, &SE, &AC, nullptr, false);
      Plan Pl;
      std::string Why;
      bool Ok = analyse(L, LI, SE, AA, DT0, Var, Pl, Why);
      if (debug())
        errs() << "merge-overflow-reports: " << F.getName() << " loop " << L->getHeader()->getName()
               << ": " << (Ok ? "MERGED " : "skipped: ") << (Ok ? "" : Why)
               << (Ok ? std::to_string(Pl.Reports.size()) + " report block(s), " +
                            std::to_string(Pl.Sites.size()) + " site(s), " +
                            std::to_string(Pl.Exits.size()) + " exit edge(s)"
                      : "")
               << "\n";
      if (Ok) Plans.push_back(std::move(Pl));
    }
    if (Plans.empty()) {
      if (!Simplified) return PreservedAnalyses::all();
      PreservedAnalyses PA;
      PA.preserve<LoopAnalysis>();
      PA.preserve<DominatorTreeAnalysis>();
      PA.preserve<ScalarEvolutionAnalysis>();
      return PA;
    }
    SmallVector<AllocaInst *, 8> Allocas;
    for (Plan &Pl : Plans) transform(Pl, F, Var, Allocas);
    DominatorTree DT(F);
    PromoteMemToReg(Allocas, DT);
    return PreservedAnalyses::none();
  }
  static bool isRequired() { return false; }
};

} // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "MergeOverflowReports", "0.1", [](PassBuilder &PB) {
            PB.registerVectorizerStartEPCallback(
                [](FunctionPassManager &FPM, OptimizationLevel) {
                  FPM.addPass(MergeOverflowReports());
                });
            PB.registerPipelineParsingCallback(
                [](StringRef Name, FunctionPassManager &FPM,
                   ArrayRef<PassBuilder::PipelineElement>) {
                  if (Name == "merge-overflow-reports") {
                    FPM.addPass(MergeOverflowReports());
                    return true;
                  }
                  return false;
                });
          }};
}
