; Where the plugin adds its passes to LLVM's default pipelines, which is how
; `rustc -Zllvm-plugins=overflow-checks.so` runs them: at the start of the
; vectorizer's part, at every level but O0, and the merge pass only at O2 and
; O3, the levels where rustc runs the loop vectorizer.
;
; RUN: opt -load-pass-plugin=%plugin -passes='default<O0>' -print-pipeline-passes -disable-output %s | FileCheck %s --check-prefix=O0
; RUN: opt -load-pass-plugin=%plugin -passes='default<O1>' -print-pipeline-passes -disable-output %s | FileCheck %s --check-prefix=NOMERGE
; RUN: opt -load-pass-plugin=%plugin -passes='default<O2>' -print-pipeline-passes -disable-output %s | FileCheck %s --check-prefix=MERGE
; RUN: opt -load-pass-plugin=%plugin -passes='default<O3>' -print-pipeline-passes -disable-output %s | FileCheck %s --check-prefix=MERGE
; RUN: opt -load-pass-plugin=%plugin -passes='default<Os>' -print-pipeline-passes -disable-output %s | FileCheck %s --check-prefix=NOMERGE
; RUN: opt -load-pass-plugin=%plugin -passes='default<Oz>' -print-pipeline-passes -disable-output %s | FileCheck %s --check-prefix=NOMERGE

; O0-NOT: rustc-

; NOMERGE: ,rustc-drop-bounded-checks,rustc-guard-counters,
; NOMERGE-NOT: rustc-merge-overflow-reports
; NOMERGE: loop-vectorize<

; MERGE: ,rustc-drop-bounded-checks,rustc-guard-counters,rustc-merge-overflow-reports,{{.*}}loop-vectorize<
