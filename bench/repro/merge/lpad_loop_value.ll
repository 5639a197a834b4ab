; A report whose landing pad uses a loop value directly (%i, no LCSSA phi). Before the LCSSA
; fix, patch 8 merged this loop, and the landing pad, now reached from the report after the
; loop, passed @sink the last iteration's %i instead of the overflowing one's (valid IR, a
; wrong value). With it, the pass sees %i through an LCSSA phi of the landing pad and leaves
; the loop alone. Reproduce with the pass as a plugin (see README.md):
;   opt-22 -load-pass-plugin=./mor.so -passes='default<O2>' -S lpad_loop_value.ll | grep -c ovf.rescan
; prints 7 with the pass of 0d807794, 0 with the fixed one.
define void @report(i32 %a, i32 %b) #0 {
  call void @ext()
  ret void
}
declare void @ext()
declare void @sink(i64)
declare i32 @pers(...)
declare {i32, i1} @llvm.uadd.with.overflow.i32(i32, i32)

define void @f(ptr noalias %out, ptr noalias readonly %a, i64 %n) personality ptr @pers {
entry:
  %cmp0 = icmp eq i64 %n, 0
  br i1 %cmp0, label %exit, label %loop
loop:
  %i = phi i64 [0, %entry], [%i.next, %cont]
  %pa = getelementptr inbounds i32, ptr %a, i64 %i
  %x = load i32, ptr %pa
  %r = call {i32,i1} @llvm.uadd.with.overflow.i32(i32 %x, i32 7)
  %v = extractvalue {i32,i1} %r, 0
  %ov = extractvalue {i32,i1} %r, 1
  br i1 %ov, label %rep, label %cont
rep:
  invoke void @report(i32 %x, i32 7) to label %cont unwind label %lpad
cont:
  %po = getelementptr inbounds i32, ptr %out, i64 %i
  store i32 %v, ptr %po
  %i.next = add nuw i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
lpad:
  %lp = landingpad {ptr, i32} cleanup
  call void @sink(i64 %i)
  resume {ptr,i32} %lp
}
attributes #0 = { noinline cold "rustc-overflow-report" }
