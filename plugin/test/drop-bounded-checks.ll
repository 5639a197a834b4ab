; The checks of Adler-32 written as the textbook has it (RFC 1950: blocks of at
; most 5552 bytes, both sums reduced modulo 65521 after each block), as rustc
; emits the loop in each mode before the loop vectorizer, cannot fail: `a` is
; at most 65535 + 255 * 5552 and `b` at most 65535 + 5552 * 65535 + 255 *
; 5552 * 5553 / 2 < 2^32. The pass drops them in every mode. Over blocks of
; 5553 bytes `b`'s check stays. A branch to a panic or to inline assembly that
; rustc did not mark as an overflow check's is not looked at.
;
; RUN: opt -load-pass-plugin=%plugin -passes=rustc-drop-bounded-checks -S %s | FileCheck %s

target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-unknown-linux-gnu"

@loc = private constant [24 x i8] zeroinitializer
@loc1 = private constant [24 x i8] zeroinitializer
@loc2 = private constant [24 x i8] zeroinitializer
@loc3 = private constant [24 x i8] zeroinitializer

; `-Coverflow-checks=on`: the loop tests `ptr == end` at its top; the checks
; leave it for a panic.
; CHECK-LABEL: @adler_panic(
; CHECK-NOT: panic_const_add_overflow
; CHECK: add nuw i32 %a
; CHECK-NOT: panic_const_add_overflow
; CHECK: add nuw i32 %a.next, %b
; CHECK-NOT: panic_const_add_overflow
; CHECK: ret i32
define i32 @adler_panic(i32 %adler, ptr noalias readonly %p, i64 range(i64 0, -9223372036854775808) %len) {
entry:
  %a0 = and i32 %adler, 65535
  %b0 = lshr i32 %adler, 16
  %empty = icmp eq i64 %len, 0
  br i1 %empty, label %done, label %block

block:
  %a.blk = phi i32 [ %a.mod, %reduce ], [ %a0, %entry ]
  %b.blk = phi i32 [ %b.mod, %reduce ], [ %b0, %entry ]
  %ptr.blk = phi ptr [ %end, %reduce ], [ %p, %entry ]
  %left = phi i64 [ %rest, %reduce ], [ %len, %entry ]
  %n = tail call i64 @llvm.umin.i64(i64 %left, i64 5552)
  %end = getelementptr inbounds nuw i8, ptr %ptr.blk, i64 %n
  %rest = sub nuw nsw i64 %left, %n
  br label %head

head:
  %ptr = phi ptr [ %ptr.blk, %block ], [ %ptr.next, %add.b ]
  %b = phi i32 [ %b.blk, %block ], [ %b.next, %add.b ]
  %a = phi i32 [ %a.blk, %block ], [ %a.next, %add.b ]
  %at.end = icmp eq ptr %ptr, %end
  br i1 %at.end, label %reduce, label %add.a

add.a:
  %byte = load i8, ptr %ptr, align 1
  %x = zext i8 %byte to i32
  %a.next = add i32 %a, %x
  %a.ov = icmp ult i32 %a.next, %a
  br i1 %a.ov, label %panic.a, label %add.b

add.b:
  %ptr.next = getelementptr inbounds nuw i8, ptr %ptr, i64 1
  %b.next = add i32 %a.next, %b
  %b.ov = icmp ult i32 %b.next, %b
  br i1 %b.ov, label %panic.b, label %head

reduce:
  %a.mod = urem i32 %a, 65521
  %b.mod = urem i32 %b, 65521
  %last = icmp eq i64 %rest, 0
  br i1 %last, label %done, label %block

done:
  %a.end = phi i32 [ %a0, %entry ], [ %a.mod, %reduce ]
  %b.end = phi i32 [ %b0, %entry ], [ %b.mod, %reduce ]
  %hi = shl nuw i32 %b.end, 16
  %r = or disjoint i32 %hi, %a.end
  ret i32 %r

panic.a:
  tail call void @panic_const_add_overflow(ptr @loc)
  unreachable

panic.b:
  tail call void @panic_const_add_overflow(ptr @loc)
  unreachable
}

; `-Coverflow-checks=report`: the loop is rotated; a failed check calls a
; report entry point and goes on.
; CHECK-LABEL: @adler_report(
; CHECK-NOT: call void @report_wrapped_overflow
; CHECK: add nuw i32 %a
; CHECK-NOT: call void @report_wrapped_overflow
; CHECK: add nuw i32 %a.next, %b
; CHECK-NOT: call void @report_wrapped_overflow
; CHECK: ret i32
define i32 @adler_report(i32 %adler, ptr noalias readonly %p, i64 range(i64 0, -9223372036854775808) %len) {
entry:
  %a0 = and i32 %adler, 65535
  %b0 = lshr i32 %adler, 16
  %empty = icmp eq i64 %len, 0
  br i1 %empty, label %done, label %block

block:
  %a.blk = phi i32 [ %a.mod, %reduce ], [ %a0, %entry ]
  %b.blk = phi i32 [ %b.mod, %reduce ], [ %b0, %entry ]
  %ptr.blk = phi ptr [ %end, %reduce ], [ %p, %entry ]
  %left = phi i64 [ %rest, %reduce ], [ %len, %entry ]
  %n = tail call i64 @llvm.umin.i64(i64 %left, i64 5552)
  %end = getelementptr inbounds nuw i8, ptr %ptr.blk, i64 %n
  %rest = sub nuw nsw i64 %left, %n
  br label %head

head:
  %a = phi i32 [ %a.next, %latch ], [ %a.blk, %block ]
  %b = phi i32 [ %b.next, %latch ], [ %b.blk, %block ]
  %ptr = phi ptr [ %ptr.next, %latch ], [ %ptr.blk, %block ]
  %ptr.next = getelementptr inbounds nuw i8, ptr %ptr, i64 1
  %byte = load i8, ptr %ptr, align 1
  %x = zext i8 %byte to i32
  %a.next = add i32 %a, %x
  %a.ov = icmp ult i32 %a.next, %a
  br i1 %a.ov, label %report.a, label %add.b

add.b:
  %b.next = add i32 %a.next, %b
  %b.ov = icmp ult i32 %b.next, %b
  br i1 %b.ov, label %report.b, label %latch

latch:
  %at.end = icmp eq ptr %ptr.next, %end
  br i1 %at.end, label %reduce, label %head

reduce:
  %a.mod = urem i32 %a.next, 65521
  %b.mod = urem i32 %b.next, 65521
  %last = icmp eq i64 %rest, 0
  br i1 %last, label %done, label %block

done:
  %a.end = phi i32 [ %a0, %entry ], [ %a.mod, %reduce ]
  %b.end = phi i32 [ %b0, %entry ], [ %b.mod, %reduce ]
  %hi = shl nuw i32 %b.end, 16
  %r = or disjoint i32 %hi, %a.end
  ret i32 %r

report.a:
  tail call void @report_wrapped_overflow(i32 %a.next, i32 %x, ptr @loc)
  br label %add.b

report.b:
  tail call void @report_wrapped_overflow(i32 %b.next, i32 %a.next, ptr @loc)
  br label %latch
}

; `-Zoverflow-report-trap`: a failed check runs the kernel's trap template, an
; inline assembly call that rustc marks "rustc-overflow-trap", and goes on.
; CHECK-LABEL: @adler_trap(
; CHECK-NOT: asm sideeffect
; CHECK: add nuw i32 %a
; CHECK-NOT: asm sideeffect
; CHECK: add nuw i32 %a.next, %b
; CHECK-NOT: asm sideeffect
; CHECK: ret i32
define i32 @adler_trap(i32 %adler, ptr noalias readonly %p, i64 range(i64 0, -9223372036854775808) %len) {
entry:
  %a0 = and i32 %adler, 65535
  %b0 = lshr i32 %adler, 16
  %empty = icmp eq i64 %len, 0
  br i1 %empty, label %done, label %block

block:
  %a.blk = phi i32 [ %a.mod, %reduce ], [ %a0, %entry ]
  %b.blk = phi i32 [ %b.mod, %reduce ], [ %b0, %entry ]
  %ptr.blk = phi ptr [ %end, %reduce ], [ %p, %entry ]
  %left = phi i64 [ %rest, %reduce ], [ %len, %entry ]
  %n = tail call i64 @llvm.umin.i64(i64 %left, i64 5552)
  %end = getelementptr inbounds nuw i8, ptr %ptr.blk, i64 %n
  %rest = sub nuw nsw i64 %left, %n
  br label %head

head:
  %a = phi i32 [ %a.next, %latch ], [ %a.blk, %block ]
  %b = phi i32 [ %b.next, %latch ], [ %b.blk, %block ]
  %ptr = phi ptr [ %ptr.next, %latch ], [ %ptr.blk, %block ]
  %ptr.next = getelementptr inbounds nuw i8, ptr %ptr, i64 1
  %byte = load i8, ptr %ptr, align 1
  %x = zext i8 %byte to i32
  %a.next = add i32 %a, %x
  %a.ov = icmp ult i32 %a.next, %a
  br i1 %a.ov, label %trap.a, label %add.b

add.b:
  %b.next = add i32 %a.next, %b
  %b.ov = icmp ult i32 %b.next, %b
  br i1 %b.ov, label %trap.b, label %latch

latch:
  %at.end = icmp eq ptr %ptr.next, %end
  br i1 %at.end, label %reduce, label %head

reduce:
  %a.mod = urem i32 %a.next, 65521
  %b.mod = urem i32 %b.next, 65521
  %last = icmp eq i64 %rest, 0
  br i1 %last, label %done, label %block

done:
  %a.end = phi i32 [ %a0, %entry ], [ %a.mod, %reduce ]
  %b.end = phi i32 [ %b0, %entry ], [ %b.mod, %reduce ]
  %hi = shl nuw i32 %b.end, 16
  %r = or disjoint i32 %hi, %a.end
  ret i32 %r

trap.a:
  tail call void asm sideeffect "ud1 $0, $1", "r,r"(i32 %a.next, i32 %x) #3
  br label %add.b

trap.b:
  tail call void asm sideeffect "ud1 $0, $1", "r,r"(i32 %b.next, i32 %a.next) #3
  br label %latch
}

; The same loop built with `-Coverflow-checks=off`, where the program runs its
; own `asm!` when a sum wraps (`let (a2, o) = a.overflowing_add(x); if o {
; asm!(...) }`): the branches are the program's, not checks, and stay, and the
; adds get no `nuw`, although the pass could prove that the branches are never
; taken.
; CHECK-LABEL: @adler_user_asm(
; CHECK: %a.next = add i32 %a, %x
; CHECK: br i1 %a.ov, label %user.a, label %add.b
; CHECK: %b.next = add i32 %a.next, %b
; CHECK: br i1 %b.ov, label %user.b, label %latch
; CHECK: user.a:
; CHECK-NEXT: call void asm sideeffect "ud1 $0, $1", "r,r"(i32 %a.next, i32 %x) #[[USER:[0-9]+]]
; CHECK: user.b:
; CHECK-NEXT: call void asm sideeffect "ud1 $0, $1", "r,r"(i32 %b.next, i32 %a.next) #[[USER]]
define i32 @adler_user_asm(i32 %adler, ptr noalias readonly %p, i64 range(i64 0, -9223372036854775808) %len) {
entry:
  %a0 = and i32 %adler, 65535
  %b0 = lshr i32 %adler, 16
  %empty = icmp eq i64 %len, 0
  br i1 %empty, label %done, label %block

block:
  %a.blk = phi i32 [ %a.mod, %reduce ], [ %a0, %entry ]
  %b.blk = phi i32 [ %b.mod, %reduce ], [ %b0, %entry ]
  %ptr.blk = phi ptr [ %end, %reduce ], [ %p, %entry ]
  %left = phi i64 [ %rest, %reduce ], [ %len, %entry ]
  %n = tail call i64 @llvm.umin.i64(i64 %left, i64 5552)
  %end = getelementptr inbounds nuw i8, ptr %ptr.blk, i64 %n
  %rest = sub nuw nsw i64 %left, %n
  br label %head

head:
  %a = phi i32 [ %a.next, %latch ], [ %a.blk, %block ]
  %b = phi i32 [ %b.next, %latch ], [ %b.blk, %block ]
  %ptr = phi ptr [ %ptr.next, %latch ], [ %ptr.blk, %block ]
  %ptr.next = getelementptr inbounds nuw i8, ptr %ptr, i64 1
  %byte = load i8, ptr %ptr, align 1
  %x = zext i8 %byte to i32
  %a.next = add i32 %a, %x
  %a.ov = icmp ult i32 %a.next, %a
  br i1 %a.ov, label %user.a, label %add.b

add.b:
  %b.next = add i32 %a.next, %b
  %b.ov = icmp ult i32 %b.next, %b
  br i1 %b.ov, label %user.b, label %latch

latch:
  %at.end = icmp eq ptr %ptr.next, %end
  br i1 %at.end, label %reduce, label %head

reduce:
  %a.mod = urem i32 %a.next, 65521
  %b.mod = urem i32 %b.next, 65521
  %last = icmp eq i64 %rest, 0
  br i1 %last, label %done, label %block

done:
  %a.end = phi i32 [ %a0, %entry ], [ %a.mod, %reduce ]
  %b.end = phi i32 [ %b0, %entry ], [ %b.mod, %reduce ]
  %hi = shl nuw i32 %b.end, 16
  %r = or disjoint i32 %hi, %a.end
  ret i32 %r

user.a:
  tail call void asm sideeffect "ud1 $0, $1", "r,r"(i32 %a.next, i32 %x) #4
  br label %add.b

user.b:
  tail call void asm sideeffect "ud1 $0, $1", "r,r"(i32 %b.next, i32 %a.next) #4
  br label %latch
}

; Trap mode, where the program also runs its own `asm!` when `b += a` wraps
; (with `overflowing_add`, which rustc does not check): the trap of `a`'s check
; goes, the program's branch stays.
; CHECK-LABEL: @adler_trap_and_user_asm(
; CHECK: %a.next = add nuw i32 %a, %x
; CHECK-NOT: asm sideeffect
; CHECK: br i1 %b.ov, label %user.b, label %latch
; CHECK-NOT: asm sideeffect
; CHECK: user.b:
; CHECK-NEXT: call void asm sideeffect "ud1 $0, $1", "r,r"(i32 %b.next, i32 %a.next) #[[USER]]
; CHECK-NOT: asm sideeffect
define i32 @adler_trap_and_user_asm(i32 %adler, ptr noalias readonly %p, i64 range(i64 0, -9223372036854775808) %len) {
entry:
  %a0 = and i32 %adler, 65535
  %b0 = lshr i32 %adler, 16
  %empty = icmp eq i64 %len, 0
  br i1 %empty, label %done, label %block

block:
  %a.blk = phi i32 [ %a.mod, %reduce ], [ %a0, %entry ]
  %b.blk = phi i32 [ %b.mod, %reduce ], [ %b0, %entry ]
  %ptr.blk = phi ptr [ %end, %reduce ], [ %p, %entry ]
  %left = phi i64 [ %rest, %reduce ], [ %len, %entry ]
  %n = tail call i64 @llvm.umin.i64(i64 %left, i64 5552)
  %end = getelementptr inbounds nuw i8, ptr %ptr.blk, i64 %n
  %rest = sub nuw nsw i64 %left, %n
  br label %head

head:
  %a = phi i32 [ %a.next, %latch ], [ %a.blk, %block ]
  %b = phi i32 [ %b.next, %latch ], [ %b.blk, %block ]
  %ptr = phi ptr [ %ptr.next, %latch ], [ %ptr.blk, %block ]
  %ptr.next = getelementptr inbounds nuw i8, ptr %ptr, i64 1
  %byte = load i8, ptr %ptr, align 1
  %x = zext i8 %byte to i32
  %a.next = add i32 %a, %x
  %a.ov = icmp ult i32 %a.next, %a
  br i1 %a.ov, label %trap.a, label %add.b

add.b:
  %b.next = add i32 %a.next, %b
  %b.ov = icmp ult i32 %b.next, %b
  br i1 %b.ov, label %user.b, label %latch

latch:
  %at.end = icmp eq ptr %ptr.next, %end
  br i1 %at.end, label %reduce, label %head

reduce:
  %a.mod = urem i32 %a.next, 65521
  %b.mod = urem i32 %b.next, 65521
  %last = icmp eq i64 %rest, 0
  br i1 %last, label %done, label %block

done:
  %a.end = phi i32 [ %a0, %entry ], [ %a.mod, %reduce ]
  %b.end = phi i32 [ %b0, %entry ], [ %b.mod, %reduce ]
  %hi = shl nuw i32 %b.end, 16
  %r = or disjoint i32 %hi, %a.end
  ret i32 %r

trap.a:
  tail call void asm sideeffect "ud1 $0, $1", "r,r"(i32 %a.next, i32 %x) #3
  br label %add.b

user.b:
  tail call void asm sideeffect "ud1 $0, $1", "r,r"(i32 %b.next, i32 %a.next) #4
  br label %latch
}

; Blocks of 5553 bytes: `a` still fits, `b` may not.
; CHECK-LABEL: @adler_5553(
; CHECK: add nuw i32 %a
; CHECK: add i32 %a.next, %b
; CHECK: ret i32
; CHECK: call void @panic_const_add_overflow
; CHECK-NOT: call void @panic_const_add_overflow
define i32 @adler_5553(i32 %adler, ptr noalias readonly %p, i64 range(i64 0, -9223372036854775808) %len) {
entry:
  %a0 = and i32 %adler, 65535
  %b0 = lshr i32 %adler, 16
  %empty = icmp eq i64 %len, 0
  br i1 %empty, label %done, label %block

block:
  %a.blk = phi i32 [ %a.mod, %reduce ], [ %a0, %entry ]
  %b.blk = phi i32 [ %b.mod, %reduce ], [ %b0, %entry ]
  %ptr.blk = phi ptr [ %end, %reduce ], [ %p, %entry ]
  %left = phi i64 [ %rest, %reduce ], [ %len, %entry ]
  %n = tail call i64 @llvm.umin.i64(i64 %left, i64 5553)
  %end = getelementptr inbounds nuw i8, ptr %ptr.blk, i64 %n
  %rest = sub nuw nsw i64 %left, %n
  br label %head

head:
  %ptr = phi ptr [ %ptr.blk, %block ], [ %ptr.next, %add.b ]
  %b = phi i32 [ %b.blk, %block ], [ %b.next, %add.b ]
  %a = phi i32 [ %a.blk, %block ], [ %a.next, %add.b ]
  %at.end = icmp eq ptr %ptr, %end
  br i1 %at.end, label %reduce, label %add.a

add.a:
  %byte = load i8, ptr %ptr, align 1
  %x = zext i8 %byte to i32
  %a.next = add i32 %a, %x
  %a.ov = icmp ult i32 %a.next, %a
  br i1 %a.ov, label %panic.a, label %add.b

add.b:
  %ptr.next = getelementptr inbounds nuw i8, ptr %ptr, i64 1
  %b.next = add i32 %a.next, %b
  %b.ov = icmp ult i32 %b.next, %b
  br i1 %b.ov, label %panic.b, label %head

reduce:
  %a.mod = urem i32 %a, 65521
  %b.mod = urem i32 %b, 65521
  %last = icmp eq i64 %rest, 0
  br i1 %last, label %done, label %block

done:
  %a.end = phi i32 [ %a0, %entry ], [ %a.mod, %reduce ]
  %b.end = phi i32 [ %b0, %entry ], [ %b.mod, %reduce ]
  %hi = shl nuw i32 %b.end, 16
  %r = or disjoint i32 %hi, %a.end
  ret i32 %r

panic.a:
  tail call void @panic_const_add_overflow(ptr @loc)
  unreachable

panic.b:
  tail call void @panic_const_add_overflow(ptr @loc)
  unreachable
}

; The same loop, whose checks lead to a panic that is not marked as an
; overflow check's (`.expect()` of a `checked_add`): left alone.
; CHECK-LABEL: @adler_expect(
; CHECK-COUNT-2: call void @expect_failed
define i32 @adler_expect(i32 %adler, ptr noalias readonly %p, i64 range(i64 0, -9223372036854775808) %len) {
entry:
  %a0 = and i32 %adler, 65535
  %b0 = lshr i32 %adler, 16
  %empty = icmp eq i64 %len, 0
  br i1 %empty, label %done, label %block

block:
  %a.blk = phi i32 [ %a.mod, %reduce ], [ %a0, %entry ]
  %b.blk = phi i32 [ %b.mod, %reduce ], [ %b0, %entry ]
  %ptr.blk = phi ptr [ %end, %reduce ], [ %p, %entry ]
  %left = phi i64 [ %rest, %reduce ], [ %len, %entry ]
  %n = tail call i64 @llvm.umin.i64(i64 %left, i64 5552)
  %end = getelementptr inbounds nuw i8, ptr %ptr.blk, i64 %n
  %rest = sub nuw nsw i64 %left, %n
  br label %head

head:
  %ptr = phi ptr [ %ptr.blk, %block ], [ %ptr.next, %add.b ]
  %b = phi i32 [ %b.blk, %block ], [ %b.next, %add.b ]
  %a = phi i32 [ %a.blk, %block ], [ %a.next, %add.b ]
  %at.end = icmp eq ptr %ptr, %end
  br i1 %at.end, label %reduce, label %add.a

add.a:
  %byte = load i8, ptr %ptr, align 1
  %x = zext i8 %byte to i32
  %a.next = add i32 %a, %x
  %a.ov = icmp ult i32 %a.next, %a
  br i1 %a.ov, label %panic.a, label %add.b

add.b:
  %ptr.next = getelementptr inbounds nuw i8, ptr %ptr, i64 1
  %b.next = add i32 %a.next, %b
  %b.ov = icmp ult i32 %b.next, %b
  br i1 %b.ov, label %panic.b, label %head

reduce:
  %a.mod = urem i32 %a, 65521
  %b.mod = urem i32 %b, 65521
  %last = icmp eq i64 %rest, 0
  br i1 %last, label %done, label %block

done:
  %a.end = phi i32 [ %a0, %entry ], [ %a.mod, %reduce ]
  %b.end = phi i32 [ %b0, %entry ], [ %b.mod, %reduce ]
  %hi = shl nuw i32 %b.end, 16
  %r = or disjoint i32 %hi, %a.end
  ret i32 %r

panic.a:
  tail call void @expect_failed(ptr @loc)
  unreachable

panic.b:
  tail call void @expect_failed(ptr @loc)
  unreachable
}

; The rotated loop over blocks of 5553 bytes: `b`'s check stays.
; CHECK-LABEL: @adler_report_5553(
; CHECK: add nuw i32 %a
; CHECK: add i32 %a.next, %b
; CHECK: ret i32
; CHECK: call void @report_wrapped_overflow(i32 %b.next
; CHECK-NOT: call void @report_wrapped_overflow
define i32 @adler_report_5553(i32 %adler, ptr noalias readonly %p, i64 range(i64 0, -9223372036854775808) %len) {
entry:
  %a0 = and i32 %adler, 65535
  %b0 = lshr i32 %adler, 16
  %empty = icmp eq i64 %len, 0
  br i1 %empty, label %done, label %block

block:
  %a.blk = phi i32 [ %a.mod, %reduce ], [ %a0, %entry ]
  %b.blk = phi i32 [ %b.mod, %reduce ], [ %b0, %entry ]
  %ptr.blk = phi ptr [ %end, %reduce ], [ %p, %entry ]
  %left = phi i64 [ %rest, %reduce ], [ %len, %entry ]
  %n = tail call i64 @llvm.umin.i64(i64 %left, i64 5553)
  %end = getelementptr inbounds nuw i8, ptr %ptr.blk, i64 %n
  %rest = sub nuw nsw i64 %left, %n
  br label %head

head:
  %a = phi i32 [ %a.next, %latch ], [ %a.blk, %block ]
  %b = phi i32 [ %b.next, %latch ], [ %b.blk, %block ]
  %ptr = phi ptr [ %ptr.next, %latch ], [ %ptr.blk, %block ]
  %ptr.next = getelementptr inbounds nuw i8, ptr %ptr, i64 1
  %byte = load i8, ptr %ptr, align 1
  %x = zext i8 %byte to i32
  %a.next = add i32 %a, %x
  %a.ov = icmp ult i32 %a.next, %a
  br i1 %a.ov, label %report.a, label %add.b

add.b:
  %b.next = add i32 %a.next, %b
  %b.ov = icmp ult i32 %b.next, %b
  br i1 %b.ov, label %report.b, label %latch

latch:
  %at.end = icmp eq ptr %ptr.next, %end
  br i1 %at.end, label %reduce, label %head

reduce:
  %a.mod = urem i32 %a.next, 65521
  %b.mod = urem i32 %b.next, 65521
  %last = icmp eq i64 %rest, 0
  br i1 %last, label %done, label %block

done:
  %a.end = phi i32 [ %a0, %entry ], [ %a.mod, %reduce ]
  %b.end = phi i32 [ %b0, %entry ], [ %b.mod, %reduce ]
  %hi = shl nuw i32 %b.end, 16
  %r = or disjoint i32 %hi, %a.end
  ret i32 %r

report.a:
  tail call void @report_wrapped_overflow(i32 %a.next, i32 %x, ptr @loc)
  br label %add.b

report.b:
  tail call void @report_wrapped_overflow(i32 %b.next, i32 %a.next, ptr @loc)
  br label %latch
}

; Without the test that `len` is not zero before the first block, a block may
; be empty: the rotated inner loop then runs 2^64 times, and both checks stay.
; CHECK-LABEL: define i32 @adler_unguarded(
; CHECK-COUNT-2: call void @report_wrapped_overflow
define i32 @adler_unguarded(i32 %adler, ptr noalias readonly %p, i64 range(i64 0, -9223372036854775808) %len) {
entry:
  %a0 = and i32 %adler, 65535
  %b0 = lshr i32 %adler, 16
  br label %block

block:
  %a.blk = phi i32 [ %a.mod, %reduce ], [ %a0, %entry ]
  %b.blk = phi i32 [ %b.mod, %reduce ], [ %b0, %entry ]
  %ptr.blk = phi ptr [ %end, %reduce ], [ %p, %entry ]
  %left = phi i64 [ %rest, %reduce ], [ %len, %entry ]
  %n = tail call i64 @llvm.umin.i64(i64 %left, i64 5552)
  %end = getelementptr inbounds nuw i8, ptr %ptr.blk, i64 %n
  %rest = sub nuw nsw i64 %left, %n
  br label %head

head:
  %a = phi i32 [ %a.next, %latch ], [ %a.blk, %block ]
  %b = phi i32 [ %b.next, %latch ], [ %b.blk, %block ]
  %ptr = phi ptr [ %ptr.next, %latch ], [ %ptr.blk, %block ]
  %ptr.next = getelementptr inbounds nuw i8, ptr %ptr, i64 1
  %byte = load i8, ptr %ptr, align 1
  %x = zext i8 %byte to i32
  %a.next = add i32 %a, %x
  %a.ov = icmp ult i32 %a.next, %a
  br i1 %a.ov, label %report.a, label %add.b

add.b:
  %b.next = add i32 %a.next, %b
  %b.ov = icmp ult i32 %b.next, %b
  br i1 %b.ov, label %report.b, label %latch

latch:
  %at.end = icmp eq ptr %ptr.next, %end
  br i1 %at.end, label %reduce, label %head

reduce:
  %a.mod = urem i32 %a.next, 65521
  %b.mod = urem i32 %b.next, 65521
  %last = icmp eq i64 %rest, 0
  br i1 %last, label %done, label %block

done:
  %hi = shl nuw i32 %b.mod, 16
  %r = or disjoint i32 %hi, %a.mod
  ret i32 %r

report.a:
  tail call void @report_wrapped_overflow(i32 %a.next, i32 %x, ptr @loc)
  br label %add.b

report.b:
  tail call void @report_wrapped_overflow(i32 %b.next, i32 %a.next, ptr @loc)
  br label %latch
}

; An inner loop of `k` iterations, where `k` is 5552 or a remainder modulo
; 5553 (at most 5552: lazy value info knows it, scalar evolution's range of
; the phi is 13 bits). A sum from at most u32::MAX - 255 * 5552 fits; with
; 5553 and a remainder modulo 5554 it does not, and the check stays.
; CHECK-LABEL: define i32 @sum_phi_bound(
; CHECK-NOT: call void @report_wrapped_overflow
; CHECK: ret i32
define i32 @sum_phi_bound(i32 %s0, ptr noalias readonly %p, i64 %x, i64 %rounds) {
entry:
  %start = tail call i32 @llvm.umin.i32(i32 %s0, i32 4293551535)
  br label %outer

outer:
  %k = phi i64 [ 5552, %entry ], [ %k.next, %outer.latch ]
  %r = phi i64 [ 0, %entry ], [ %r.next, %outer.latch ]
  %acc = phi i32 [ 0, %entry ], [ %acc.next, %outer.latch ]
  %none = icmp eq i64 %k, 0
  br i1 %none, label %outer.latch, label %inner.pre

inner.pre:
  br label %inner

inner:
  %i = phi i64 [ 0, %inner.pre ], [ %i.next, %inner.latch ]
  %s = phi i32 [ %start, %inner.pre ], [ %s.next, %inner.latch ]
  %q = getelementptr inbounds nuw i8, ptr %p, i64 %i
  %byte = load i8, ptr %q, align 1
  %v = zext i8 %byte to i32
  %s.next = add i32 %s, %v
  %ov = icmp ult i32 %s.next, %s
  br i1 %ov, label %report, label %inner.latch

report:
  tail call void @report_wrapped_overflow(i32 %s.next, i32 %v, ptr @loc)
  br label %inner.latch

inner.latch:
  %i.next = add nuw i64 %i, 1
  %more = icmp ult i64 %i.next, %k
  br i1 %more, label %inner, label %inner.exit

inner.exit:
  %sum = phi i32 [ %s.next, %inner.latch ]
  br label %outer.latch

outer.latch:
  %got = phi i32 [ 0, %outer ], [ %sum, %inner.exit ]
  %acc.next = xor i32 %acc, %got
  %xr = xor i64 %x, %r
  %k.next = urem i64 %xr, 5553
  %r.next = add i64 %r, 1
  %again = icmp ult i64 %r.next, %rounds
  br i1 %again, label %outer, label %done

done:
  ret i32 %acc.next
}

; CHECK-LABEL: define i32 @sum_phi_bound_5553(
; CHECK: call void @report_wrapped_overflow
define i32 @sum_phi_bound_5553(i32 %s0, ptr noalias readonly %p, i64 %x, i64 %rounds) {
entry:
  %start = tail call i32 @llvm.umin.i32(i32 %s0, i32 4293551535)
  br label %outer

outer:
  %k = phi i64 [ 5553, %entry ], [ %k.next, %outer.latch ]
  %r = phi i64 [ 0, %entry ], [ %r.next, %outer.latch ]
  %acc = phi i32 [ 0, %entry ], [ %acc.next, %outer.latch ]
  %none = icmp eq i64 %k, 0
  br i1 %none, label %outer.latch, label %inner.pre

inner.pre:
  br label %inner

inner:
  %i = phi i64 [ 0, %inner.pre ], [ %i.next, %inner.latch ]
  %s = phi i32 [ %start, %inner.pre ], [ %s.next, %inner.latch ]
  %q = getelementptr inbounds nuw i8, ptr %p, i64 %i
  %byte = load i8, ptr %q, align 1
  %v = zext i8 %byte to i32
  %s.next = add i32 %s, %v
  %ov = icmp ult i32 %s.next, %s
  br i1 %ov, label %report, label %inner.latch

report:
  tail call void @report_wrapped_overflow(i32 %s.next, i32 %v, ptr @loc)
  br label %inner.latch

inner.latch:
  %i.next = add nuw i64 %i, 1
  %more = icmp ult i64 %i.next, %k
  br i1 %more, label %inner, label %inner.exit

inner.exit:
  %sum = phi i32 [ %s.next, %inner.latch ]
  br label %outer.latch

outer.latch:
  %got = phi i32 [ 0, %outer ], [ %sum, %inner.exit ]
  %acc.next = xor i32 %acc, %got
  %xr = xor i64 %x, %r
  %k.next = urem i64 %xr, 5554
  %r.next = add i64 %r, 1
  %again = icmp ult i64 %r.next, %rounds
  br i1 %again, label %outer, label %done

done:
  ret i32 %acc.next
}

; Panic mode with `panic=unwind` and a value to drop: one `invoke` of the
; panic, with the location in a phi, for the loop's two checks and for two
; checks after it. The loop's branches to it go; the others and the block
; stay, with the phi's values for them.
; CHECK-LABEL: define i32 @shared_invoke(
; CHECK: panic:
; CHECK-NEXT: %loc = phi ptr [ @loc3, %after ], [ @loc3, %last ]
; CHECK-NEXT: invoke void @panic_const_add_overflow(ptr %loc)
define i32 @shared_invoke(ptr noalias readonly dereferenceable(4096) %v, i32 %st) personality ptr @personality {
entry:
  %a0 = and i32 %st, 65535
  %hi = lshr i32 %st, 16
  %hi.sub = add nsw i32 %hi, -65521
  %small = icmp ult i32 %st, -983040
  %b0 = select i1 %small, i32 %hi, i32 %hi.sub
  br label %head

head:
  %i = phi i64 [ 0, %entry ], [ %i.next, %add.b ]
  %b = phi i32 [ %b0, %entry ], [ %b.next, %add.b ]
  %a = phi i32 [ %a0, %entry ], [ %a.next, %add.b ]
  %at.end = icmp eq i64 %i, 4096
  br i1 %at.end, label %after, label %add.a

after:
  %ab = add i32 %a, %b
  %ab.ov = icmp ult i32 %ab, %a
  br i1 %ab.ov, label %panic, label %last

add.a:
  %q = getelementptr inbounds nuw i8, ptr %v, i64 %i
  %byte = load i8, ptr %q, align 1
  %x = zext i8 %byte to i32
  %a.next = add i32 %a, %x
  %a.ov = icmp ult i32 %a.next, %a
  br i1 %a.ov, label %panic, label %add.b

add.b:
  %i.next = add nuw nsw i64 %i, 1
  %b.next = add i32 %a.next, %b
  %b.ov = icmp ult i32 %b.next, %b
  br i1 %b.ov, label %panic, label %head

panic:
  %loc = phi ptr [ @loc3, %after ], [ @loc1, %add.a ], [ @loc2, %add.b ], [ @loc3, %last ]
  invoke void @panic_const_add_overflow(ptr %loc)
          to label %unreachable unwind label %cleanup

unreachable:
  unreachable

last:
  %r = add i32 %ab, %st
  %r.ov = icmp ult i32 %r, %ab
  br i1 %r.ov, label %panic, label %ret

ret:
  call void @ext(i32 %st)
  ret i32 %r

cleanup:
  %lp = landingpad { ptr, i32 } cleanup
  call void @ext(i32 %st)
  resume { ptr, i32 } %lp
}

; The add runs above the exit and the check below it: the check, which only
; runs while `i < lim`, cannot fail and goes, but the add also runs when
; `i == lim` (255 + 1 wraps to 0, which the exit returns). It keeps its
; intrinsic and gets no `nuw`.
; CHECK-LABEL: define i1 @add_above_exit(
; CHECK: call { i8, i1 } @llvm.uadd.with.overflow.i8(i8 %i, i8 %v)
; CHECK-NOT: add nuw
; CHECK-NOT: call void @panic_const_add_overflow
; CHECK: ret i1
define i1 @add_above_exit(i8 %lim, i1 %b) {
entry:
  %v = zext i1 %b to i8
  br label %header

header:
  %i = phi i8 [ 0, %entry ], [ %i.next, %latch ]
  %wo = call { i8, i1 } @llvm.uadd.with.overflow.i8(i8 %i, i8 %v)
  %w = extractvalue { i8, i1 } %wo, 0
  %done = icmp eq i8 %i, %lim
  br i1 %done, label %exit, label %check

check:
  %ov = extractvalue { i8, i1 } %wo, 1
  br i1 %ov, label %panic, label %latch

latch:
  %i.next = add i8 %i, 1
  br label %header

panic:
  call void @panic_const_add_overflow(ptr @loc)
  unreachable

exit:
  %z = icmp eq i8 %w, 0
  ret i1 %z
}

declare { i8, i1 } @llvm.uadd.with.overflow.i8(i8, i8)
; The same with the check in its compare form: the add above the exit keeps
; no `nuw`.
; CHECK-LABEL: define i1 @add_above_exit_cmp(
; CHECK: %w = add i8 %i, %v
; CHECK-NOT: call void @panic_const_add_overflow
; CHECK: ret i1
define i1 @add_above_exit_cmp(i8 %lim, i1 %b) {
entry:
  %v = zext i1 %b to i8
  br label %header

header:
  %i = phi i8 [ 0, %entry ], [ %i.next, %latch ]
  %w = add i8 %i, %v
  %done = icmp eq i8 %i, %lim
  br i1 %done, label %exit, label %check

check:
  %ov = icmp ult i8 %w, %i
  br i1 %ov, label %panic, label %latch

latch:
  call void @ext8(i8 %w)
  %i.next = add i8 %i, 1
  br label %header

panic:
  call void @panic_const_add_overflow(ptr @loc)
  unreachable

exit:
  %o = icmp ult i8 %w, %i
  ret i1 %o
}

declare void @ext8(i8)
declare i64 @llvm.umin.i64(i64, i64)
declare i32 @llvm.umin.i32(i32, i32)
declare void @ext(i32)
declare i32 @personality(...)
declare void @panic_const_add_overflow(ptr) #0
declare void @expect_failed(ptr) #1
declare void @report_wrapped_overflow(i32, i32, ptr) #2

attributes #0 = { cold noinline noreturn "rustc-overflow-panic" }
attributes #1 = { cold noinline noreturn }
attributes #2 = { cold noinline "rustc-overflow-report" }
; The trap's inline assembly as rustc emits it (`nomem`), and a user's.
attributes #3 = { nounwind memory(inaccessiblemem: readwrite) "rustc-overflow-trap" }
attributes #4 = { nounwind memory(inaccessiblemem: readwrite) }
