; Why a report call costs more code on AArch64 than on x86_64 (LLVM IR, not Rust).
;
; The report entry points use `preserve_most` (rustc's `rust-cold`). On x86_64 its callee keeps
; every general-purpose register but r11 (and rax if it returns a value), so a value that is
; passed in an argument register is still there after the call. On AArch64 it keeps every
; general-purpose register but x0-x8 and x16-x18, that is not the argument registers: a value that
; is passed, and needed after the call, is copied to a register the callee keeps and back (`mov w9,
; w0` ... `mov w0, w9` in @tail). In a loop (@loop), the values that live in the argument
; registers are moved out of the way and back on either architecture.
;
;   llc-22 -O2 aarch64_args.ll -o -                                  # AArch64
;   llc-22 -O2 -mtriple=x86_64-unknown-linux-gnu aarch64_args.ll -o - # x86_64
;
; Register-to-register moves in the report block, with llc-22 (LLVM 22.1):
; - @tail: AArch64 2 (`mov w9, w0`, `mov w0, w9`); x86_64 1 (`movl %edi, %eax`, the copy of the
;   return value that the other path has too).
; - @loop: AArch64 9 (three arguments, and three values moved out and back); x86_64 8 (two, the
;   site being an immediate, and three out and back, one of them through rbx, which the function
;   then saves in its prologue).
; - @loop_returned, the entry point declared to return its first argument (`returned`): x86_64 5;
;   AArch64 6, but LLVM then gives the call the register mask of an ordinary AAPCS call (x0 kept,
;   x9-x15 no longer), and the function saves and restores x19-x24 in its prologue and epilogue.

target triple = "aarch64-unknown-none"

@d = internal constant [16 x i8] zeroinitializer

declare preserve_mostcc void @report(i32, i32, ptr)
declare preserve_mostcc void @report64(i64, i64, ptr)
declare preserve_mostcc i64 @report64_returned(i64 returned, i64, ptr)
declare { i32, i1 } @llvm.uadd.with.overflow.i32(i32, i32)
declare { i64, i1 } @llvm.uadd.with.overflow.i64(i64, i64)

define i32 @tail(i32 %a, i32 %b) {
entry:
  %s = call { i32, i1 } @llvm.uadd.with.overflow.i32(i32 %a, i32 %b)
  %w = extractvalue { i32, i1 } %s, 0
  %o = extractvalue { i32, i1 } %s, 1
  br i1 %o, label %rep, label %done, !prof !0

rep:
  call preserve_mostcc void @report(i32 %w, i32 %b, ptr @d)
  br label %done

done:
  ret i32 %w
}

define i64 @loop(ptr %p, i64 %n, i64 %k) {
entry:
  br label %l

l:
  %i = phi i64 [ 0, %entry ], [ %i1, %c ]
  %acc = phi i64 [ 0, %entry ], [ %w, %c ]
  %x = phi i64 [ 1, %entry ], [ %x2, %c ]
  %q = getelementptr i64, ptr %p, i64 %i
  %v = load i64, ptr %q
  %s = call { i64, i1 } @llvm.uadd.with.overflow.i64(i64 %acc, i64 %v)
  %w = extractvalue { i64, i1 } %s, 0
  %o = extractvalue { i64, i1 } %s, 1
  %x2 = xor i64 %x, %v
  br i1 %o, label %rep, label %c, !prof !0

rep:
  call preserve_mostcc void @report64(i64 %w, i64 %v, ptr @d)
  br label %c

c:
  %i1 = add i64 %i, 1
  %e = icmp eq i64 %i1, %n
  br i1 %e, label %x.exit, label %l

x.exit:
  %r = add i64 %w, %x2
  %r2 = mul i64 %r, %k
  ret i64 %r2
}

define i64 @loop_returned(ptr %p, i64 %n, i64 %k) {
entry:
  br label %l

l:
  %i = phi i64 [ 0, %entry ], [ %i1, %c ]
  %acc = phi i64 [ 0, %entry ], [ %w, %c ]
  %x = phi i64 [ 1, %entry ], [ %x2, %c ]
  %q = getelementptr i64, ptr %p, i64 %i
  %v = load i64, ptr %q
  %s = call { i64, i1 } @llvm.uadd.with.overflow.i64(i64 %acc, i64 %v)
  %w = extractvalue { i64, i1 } %s, 0
  %o = extractvalue { i64, i1 } %s, 1
  %x2 = xor i64 %x, %v
  br i1 %o, label %rep, label %c, !prof !0

rep:
  %unused = call preserve_mostcc i64 @report64_returned(i64 %w, i64 %v, ptr @d)
  br label %c

c:
  %i1 = add i64 %i, 1
  %e = icmp eq i64 %i1, %n
  br i1 %e, label %x.exit, label %l

x.exit:
  %r = add i64 %w, %x2
  %r2 = mul i64 %r, %k
  ret i64 %r2
}

!0 = !{!"branch_weights", i32 1, i32 2000}
