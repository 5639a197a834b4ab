; A histogram, `counts[b] += 1` over a slice, as rustc emits the loop in each
; mode before the loop vectorizer. Whether a counter can overflow depends on
; the counts it starts with, so the pass versions the loop: if the largest of
; the 256 counters plus the loop's length fits in a u32, the loop runs in a
; copy without its check. The original keeps it, for the other runs. A loop
; whose branch goes to a user's inline assembly rather than to a check is left
; alone.
;
; RUN: opt -load-pass-plugin=%plugin -passes=rustc-guard-counters -S %s | FileCheck %s

target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-unknown-linux-gnu"

@loc = private constant [24 x i8] zeroinitializer
@loc2 = private constant [24 x i8] zeroinitializer

; `-Coverflow-checks=on`: the check leaves the loop for a panic, which both
; copies share.
; CHECK-LABEL: @histogram_panic(
; CHECK: br i1 %{{.*}}, label %counters.scan, label %pre.split
; CHECK: loop.counters:
; CHECK-NOT: icmp eq i32 %{{.*}}, -1
; CHECK: add nuw i32 %old.counters, 1
; CHECK: counters.scan:
; CHECK: counters.check:
; CHECK: br i1 %{{.*}}, label %pre.split.counters, label %pre.split, !prof
; CHECK: loop:
; CHECK: %full = icmp eq i32 %old, -1
; CHECK: br i1 %full, label %panic, label %next
; CHECK: panic:
; CHECK-NEXT: call void @panic_const_add_overflow
define void @histogram_panic(ptr noalias readonly %data, i64 range(i64 0, -9223372036854775808) %len, ptr noalias align 4 dereferenceable(1024) %counts) {
entry:
  %end = getelementptr inbounds nuw i8, ptr %data, i64 %len
  %empty = icmp samesign eq i64 %len, 0
  br i1 %empty, label %done, label %pre

pre:
  br label %loop

loop:
  %p = phi ptr [ %p.next, %next ], [ %data, %pre ]
  %byte = load i8, ptr %p, align 1
  %i = zext i8 %byte to i64
  %slot = getelementptr inbounds nuw i32, ptr %counts, i64 %i
  %old = load i32, ptr %slot, align 4
  %full = icmp eq i32 %old, -1
  br i1 %full, label %panic, label %next

next:
  %p.next = getelementptr inbounds nuw i8, ptr %p, i64 1
  %new = add nuw i32 %old, 1
  store i32 %new, ptr %slot, align 4
  %at.end = icmp eq ptr %p.next, %end
  br i1 %at.end, label %exit, label %loop

exit:
  br label %done

done:
  ret void

panic:
  tail call void @panic_const_add_overflow(ptr @loc)
  unreachable
}

; `-Zoverflow-report-trap`: the check's trap block, whose inline assembly rustc
; marks "rustc-overflow-trap", is in the loop; the copy loses it.
; CHECK-LABEL: define void @histogram_trap(
; CHECK: loop.counters:
; CHECK-NOT: asm sideeffect
; CHECK: counters.check:
; CHECK: loop:
; CHECK: asm sideeffect
; CHECK-NOT: asm sideeffect
; CHECK: ret void
define void @histogram_trap(ptr noalias readonly %data, i64 range(i64 0, -9223372036854775808) %len, ptr noalias align 4 dereferenceable(1024) %counts) {
entry:
  %end = getelementptr inbounds nuw i8, ptr %data, i64 %len
  %empty = icmp samesign eq i64 %len, 0
  br i1 %empty, label %done, label %pre

pre:
  br label %loop

loop:
  %p = phi ptr [ %p.next, %next ], [ %data, %pre ]
  %byte = load i8, ptr %p, align 1
  %i = zext i8 %byte to i64
  %slot = getelementptr inbounds nuw i32, ptr %counts, i64 %i
  %old = load i32, ptr %slot, align 4
  %new = add i32 %old, 1
  %full = icmp eq i32 %old, -1
  br i1 %full, label %trap, label %next

trap:
  tail call void asm sideeffect "ud1 $0, $1", "r,r"(i32 %new, i32 1) #1
  br label %next

next:
  %p.next = getelementptr inbounds nuw i8, ptr %p, i64 1
  store i32 %new, ptr %slot, align 4
  %at.end = icmp eq ptr %p.next, %end
  br i1 %at.end, label %exit, label %loop

exit:
  br label %done

done:
  ret void
}

; `-Coverflow-checks=off`, and the program runs its own `asm!` when a counter
; is about to wrap (`if old == u32::MAX { asm!(..., options(nomem, nostack)) }`
; before `counts[b] = old.wrapping_add(1)`): the same branch as a trap check's,
; but not a check. The loop is not versioned and keeps the branch.
; CHECK-LABEL: define void @histogram_user_asm(
; CHECK-NOT: counters.
; CHECK: %full = icmp eq i32 %old, -1
; CHECK-NEXT: br i1 %full, label %user, label %next
; CHECK: user:
; CHECK-NEXT: call void asm sideeffect "# counter $0 saturated", "r"(ptr %slot) #[[USER:[0-9]+]]
; CHECK-NEXT: br label %next
; CHECK: %new = add i32 %old, 1
; CHECK-NOT: counters.
; CHECK: ret void
define void @histogram_user_asm(ptr noalias readonly %data, i64 range(i64 0, -9223372036854775808) %len, ptr noalias align 4 dereferenceable(1024) %counts) {
entry:
  %end = getelementptr inbounds nuw i8, ptr %data, i64 %len
  %empty = icmp samesign eq i64 %len, 0
  br i1 %empty, label %done, label %pre

pre:
  br label %loop

loop:
  %p = phi ptr [ %p.next, %next ], [ %data, %pre ]
  %byte = load i8, ptr %p, align 1
  %i = zext i8 %byte to i64
  %slot = getelementptr inbounds nuw i32, ptr %counts, i64 %i
  %old = load i32, ptr %slot, align 4
  %full = icmp eq i32 %old, -1
  br i1 %full, label %user, label %next

user:
  tail call void asm sideeffect "# counter $0 saturated", "r"(ptr %slot) #2
  br label %next

next:
  %p.next = getelementptr inbounds nuw i8, ptr %p, i64 1
  %new = add i32 %old, 1
  store i32 %new, ptr %slot, align 4
  %at.end = icmp eq ptr %p.next, %end
  br i1 %at.end, label %exit, label %loop

exit:
  br label %done

done:
  ret void
}

; Panic mode with `panic=unwind` and a value to drop: the loop's check and one
; after it share an `invoke` of the panic, with the location in a phi. The
; pass gives the loop a dedicated exit to it, and versions the loop through
; that exit; the check after the loop and the phi's value for it stay.
; CHECK-LABEL: define i32 @histogram_shared_invoke(
; CHECK: counters.check:
; CHECK: panic:
; CHECK-NEXT: %loc = phi ptr
; CHECK-NEXT: invoke void @panic_const_add_overflow(ptr %loc)
define i32 @histogram_shared_invoke(ptr noalias readonly %data, i64 range(i64 0, -9223372036854775808) %len, ptr noalias align 4 dereferenceable(1024) %counts, i32 %k) personality ptr @personality {
entry:
  %end = getelementptr inbounds nuw i8, ptr %data, i64 %len
  %empty = icmp samesign eq i64 %len, 0
  br i1 %empty, label %after, label %loop

loop:
  %p = phi ptr [ %p.next, %next ], [ %data, %entry ]
  %byte = load i8, ptr %p, align 1
  %i = zext i8 %byte to i64
  %slot = getelementptr inbounds nuw i32, ptr %counts, i64 %i
  %old = load i32, ptr %slot, align 4
  %full = icmp eq i32 %old, -1
  br i1 %full, label %panic, label %next

next:
  %p.next = getelementptr inbounds nuw i8, ptr %p, i64 1
  %new = add nuw i32 %old, 1
  store i32 %new, ptr %slot, align 4
  %at.end = icmp eq ptr %p.next, %end
  br i1 %at.end, label %after, label %loop

after:
  %seven = getelementptr inbounds nuw i8, ptr %counts, i64 28
  %c7 = load i32, ptr %seven, align 4
  %r = add i32 %c7, %k
  %r.ov = icmp ult i32 %r, %c7
  br i1 %r.ov, label %panic, label %ret

panic:
  %loc = phi ptr [ @loc, %after ], [ @loc2, %loop ]
  invoke void @panic_const_add_overflow(ptr %loc)
          to label %unreachable unwind label %cleanup

unreachable:
  unreachable

ret:
  call void @ext(i32 %k)
  ret i32 %r

cleanup:
  %lp = landingpad { ptr, i32 } cleanup
  call void @ext(i32 %k)
  resume { ptr, i32 } %lp
}

declare void @panic_const_add_overflow(ptr) #0
declare void @ext(i32)
declare i32 @personality(...)

attributes #0 = { cold noinline noreturn "rustc-overflow-panic" }
; The trap's inline assembly as rustc emits it (`nomem`), and a user's.
attributes #1 = { nounwind memory(inaccessiblemem: readwrite) "rustc-overflow-trap" }
attributes #2 = { nounwind memory(inaccessiblemem: readwrite) }
