; `-Zmerge-overflow-reports`: the report calls of an innermost loop, which
; rustc marks "rustc-merge-overflow-reports", become one report per site at the
; loop's exit, so that the loop vectorizes. The loops are as rustc emits them
; at `-Copt-level=2` before the loop vectorizer, in report mode.
;
; REQUIRES: x86-registered-target
; RUN: opt -load-pass-plugin=%plugin -passes=rustc-merge-overflow-reports -S %s | FileCheck %s

target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-unknown-linux-gnu"

@loc = private constant [24 x i8] zeroinitializer

; `out[i] = a[i] + b[i]`: the loop only sets the site's pending flag; at the
; exit, a pending site's check runs again from the first iteration until it
; fails, and its operands are reported.
; CHECK-LABEL: define void @add_arrays(
; CHECK: loop:
; CHECK-NEXT: %[[PENDING:.*]] = phi i1 [ false, %start ], [ %[[NEXT:.*]], %latch ]
; CHECK: %ov = icmp ult i32 %sum, %x
; CHECK-NEXT: %[[NEXT]] = or i1 %[[PENDING]], %ov
; CHECK-NEXT: br label %latch
; CHECK: latch:
; CHECK-NOT: call
; CHECK: br i1 %done, label %exit.report, label %loop
; CHECK: exit.report:
; CHECK-NEXT: br i1 %[[NEXT]]
; CHECK: ovf.rescan:
; CHECK-NEXT: %i.rescan = phi i64 [ 0, %{{.*}} ], [ %{{.*}}, %ovf.rescan.next ]
; CHECK: br i1 %{{.*}}, label %ovf.rescan.found, label %ovf.rescan.next
; CHECK: %[[RESULT:.*]] = phi i32 [ poison, %exit.report ], [ %{{.*}}, %ovf.rescan.found ]
; CHECK-NEXT: %[[RHS:.*]] = phi i32 [ poison, %exit.report ], [ %{{.*}}, %ovf.rescan.found ]
; CHECK-NEXT: br i1 %[[NEXT]]
; CHECK: call void @report_wrapped_overflow(i32 %[[RESULT]], i32 %[[RHS]], ptr @loc)
; CHECK-NOT: call void @report_wrapped_overflow
; CHECK: ret void
define void @add_arrays(ptr noalias writeonly align 4 captures(none) dereferenceable(4096) %out, ptr noalias readonly align 4 captures(none) dereferenceable(4096) %a, ptr noalias readonly align 4 captures(none) dereferenceable(4096) %b) {
start:
  br label %loop

loop:
  %i = phi i64 [ 0, %start ], [ %i.next, %latch ]
  %i.next = add nuw nsw i64 %i, 1
  %pa = getelementptr inbounds nuw i32, ptr %a, i64 %i
  %x = load i32, ptr %pa, align 4
  %pb = getelementptr inbounds nuw i32, ptr %b, i64 %i
  %y = load i32, ptr %pb, align 4
  %sum = add i32 %y, %x
  %ov = icmp ult i32 %sum, %x
  br i1 %ov, label %report, label %latch

latch:
  %po = getelementptr inbounds nuw i32, ptr %out, i64 %i
  store i32 %sum, ptr %po, align 4
  %done = icmp eq i64 %i.next, 1024
  br i1 %done, label %exit, label %loop

exit:
  ret void

report:
  call void @report_wrapped_overflow(i32 %sum, i32 %y, ptr @loc) #1
  br label %latch
}

; The same loop in a crate built without `-Zmerge-overflow-reports`: its report
; call is not marked, and the loop is left alone.
; CHECK-LABEL: define void @add_arrays_unmarked(
; CHECK-NOT: ovf.
; CHECK: br i1 %ov, label %report, label %latch
; CHECK-NOT: ovf.
; CHECK: report:
; CHECK-NEXT: call void @report_wrapped_overflow(i32 %sum, i32 %y, ptr @loc)
; CHECK-NEXT: br label %latch
define void @add_arrays_unmarked(ptr noalias writeonly align 4 captures(none) dereferenceable(4096) %out, ptr noalias readonly align 4 captures(none) dereferenceable(4096) %a, ptr noalias readonly align 4 captures(none) dereferenceable(4096) %b) {
start:
  br label %loop

loop:
  %i = phi i64 [ 0, %start ], [ %i.next, %latch ]
  %i.next = add nuw nsw i64 %i, 1
  %pa = getelementptr inbounds nuw i32, ptr %a, i64 %i
  %x = load i32, ptr %pa, align 4
  %pb = getelementptr inbounds nuw i32, ptr %b, i64 %i
  %y = load i32, ptr %pb, align 4
  %sum = add i32 %y, %x
  %ov = icmp ult i32 %sum, %x
  br i1 %ov, label %report, label %latch

latch:
  %po = getelementptr inbounds nuw i32, ptr %out, i64 %i
  store i32 %sum, ptr %po, align 4
  %done = icmp eq i64 %i.next, 1024
  br i1 %done, label %exit, label %loop

exit:
  ret void

report:
  call void @report_wrapped_overflow(i32 %sum, i32 %y, ptr @loc) #2
  br label %latch
}

; The same loop for a target without vector registers (the kernel's x86_64,
; which disables SSE): merging would not let it vectorize, and it is left
; alone.
; CHECK-LABEL: define void @add_arrays_no_simd(
; CHECK-NOT: ovf.
; CHECK: report:
; CHECK-NEXT: call void @report_wrapped_overflow(i32 %sum, i32 %y, ptr @loc)
define void @add_arrays_no_simd(ptr noalias writeonly align 4 captures(none) dereferenceable(4096) %out, ptr noalias readonly align 4 captures(none) dereferenceable(4096) %a, ptr noalias readonly align 4 captures(none) dereferenceable(4096) %b) #3 {
start:
  br label %loop

loop:
  %i = phi i64 [ 0, %start ], [ %i.next, %latch ]
  %i.next = add nuw nsw i64 %i, 1
  %pa = getelementptr inbounds nuw i32, ptr %a, i64 %i
  %x = load i32, ptr %pa, align 4
  %pb = getelementptr inbounds nuw i32, ptr %b, i64 %i
  %y = load i32, ptr %pb, align 4
  %sum = add i32 %y, %x
  %ov = icmp ult i32 %sum, %x
  br i1 %ov, label %report, label %latch

latch:
  %po = getelementptr inbounds nuw i32, ptr %out, i64 %i
  store i32 %sum, ptr %po, align 4
  %done = icmp eq i64 %i.next, 1024
  br i1 %done, label %exit, label %loop

exit:
  ret void

report:
  call void @report_wrapped_overflow(i32 %sum, i32 %y, ptr @loc) #1
  br label %latch
}

; The same loop with inline assembly in it, even a `pure`, `nomem` `asm!`
; (`out[i] = bswap(a[i] + b[i])`): the pass takes no loop with inline assembly,
; and leaves it alone.
; CHECK-LABEL: define void @add_arrays_asm(
; CHECK-NOT: ovf.
; CHECK: %swapped = call i32 asm "bswapl $0", "=r,0"(i32 %sum)
; CHECK: report:
; CHECK-NEXT: call void @report_wrapped_overflow(i32 %sum, i32 %y, ptr @loc)
define void @add_arrays_asm(ptr noalias writeonly align 4 captures(none) dereferenceable(4096) %out, ptr noalias readonly align 4 captures(none) dereferenceable(4096) %a, ptr noalias readonly align 4 captures(none) dereferenceable(4096) %b) {
start:
  br label %loop

loop:
  %i = phi i64 [ 0, %start ], [ %i.next, %latch ]
  %i.next = add nuw nsw i64 %i, 1
  %pa = getelementptr inbounds nuw i32, ptr %a, i64 %i
  %x = load i32, ptr %pa, align 4
  %pb = getelementptr inbounds nuw i32, ptr %b, i64 %i
  %y = load i32, ptr %pb, align 4
  %sum = add i32 %y, %x
  %ov = icmp ult i32 %sum, %x
  br i1 %ov, label %report, label %latch

latch:
  %swapped = call i32 asm "bswapl $0", "=r,0"(i32 %sum) #4
  %po = getelementptr inbounds nuw i32, ptr %out, i64 %i
  store i32 %swapped, ptr %po, align 4
  %done = icmp eq i64 %i.next, 1024
  br i1 %done, label %exit, label %loop

exit:
  ret void

report:
  call void @report_wrapped_overflow(i32 %sum, i32 %y, ptr @loc) #1
  br label %latch
}

; A `u32` sum of bytes, `s += x as u32` over a slice: an accumulator. The check
; leaves the loop, and `s` is a plain reduction. At the exit, a run of fewer
; than 2^32 / 255 iterations wrapped iff `s` ended below its start; after a
; longer one the bytes are summed again in 64 bits. If the sum wrapped, the
; rescan finds the first overflow among the run's iterations.
; CHECK-LABEL: define i32 @sum_bytes(
; CHECK: loop:
; CHECK-NOT: icmp
; CHECK: %s.next = add i32 %s, %x
; CHECK-NEXT: br label %latch
; CHECK: {{.*}}.report:
; CHECK-NEXT: %[[WRAPPED:.*]] = icmp ult i32 %s.next, %s0
; CHECK-NEXT: %[[SHORT:.*]] = icmp ult i64 %[[COUNT:.*]], 16843009
; CHECK-NEXT: br i1 %[[SHORT]]
; CHECK: ovf.wide:
; CHECK: %ovf.wide.sum = phi i64
; CHECK: add i64 %ovf.wide.sum
; CHECK: ovf.wide.done:
; CHECK-NEXT: icmp ugt i64 %{{.*}}, 4294967295
; CHECK: ovf.rescan:
; CHECK: ovf.rescan.more:
; CHECK-NEXT: icmp eq i64 %ovf.rescan.count, %[[COUNT]]
; CHECK: call void @report_wrapped_overflow(i32 %ovf.arg, i32 %ovf.arg2, ptr @loc)
; CHECK-NOT: call void @report_wrapped_overflow
; CHECK: ret i32
define i32 @sum_bytes(i32 %s0, ptr noalias readonly captures(address) %data, i64 range(i64 0, -9223372036854775808) %len) {
start:
  %end = getelementptr inbounds nuw i8, ptr %data, i64 %len
  %empty = icmp samesign eq i64 %len, 0
  br i1 %empty, label %exit, label %loop

loop:
  %s = phi i32 [ %s.next, %latch ], [ %s0, %start ]
  %p = phi ptr [ %p.next, %latch ], [ %data, %start ]
  %p.next = getelementptr inbounds nuw i8, ptr %p, i64 1
  %byte = load i8, ptr %p, align 1
  %x = zext i8 %byte to i32
  %s.next = add i32 %s, %x
  %ov = icmp ult i32 %s.next, %s
  br i1 %ov, label %report, label %latch

latch:
  %at.end = icmp eq ptr %p.next, %end
  br i1 %at.end, label %exit, label %loop

exit:
  %r = phi i32 [ %s0, %start ], [ %s.next, %latch ]
  ret i32 %r

report:
  call void @report_wrapped_overflow(i32 %s.next, i32 %x, ptr @loc) #1
  br label %latch
}

declare void @report_wrapped_overflow(i32, i32, ptr) #0

attributes #0 = { cold noinline nounwind "rustc-overflow-report" }
; A report call of a crate built with and without `-Zmerge-overflow-reports`.
attributes #1 = { noinline nounwind "rustc-merge-overflow-reports" }
attributes #2 = { noinline nounwind }
attributes #3 = { "target-cpu"="x86-64" "target-features"="-sse,-mmx" }
attributes #4 = { nounwind willreturn memory(none) }
