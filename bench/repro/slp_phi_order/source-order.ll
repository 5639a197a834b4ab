; Adler-32's two-level loop of adler2 2.0.1's compute, reduced. The three files differ only in
; the order of the inner loop header's phis: a0 a1 a2 a3 b0 b1 b2 b3 (the order of the source's updates): vectorized.
; opt-22 -mtriple=x86_64-unknown-linux-gnu -passes=slp-vectorizer source-order.ll -S | grep -c '<4 x i32>'
define void @lanes(ptr noalias %p, i64 %chunks, ptr noalias %out) {
entry:
  br label %outer
outer:
  %b3.o = phi i32 [ 0, %entry ], [ %b3.r, %latch ]
  %b2.o = phi i32 [ 0, %entry ], [ %b2.r, %latch ]
  %b1.o = phi i32 [ 0, %entry ], [ %b1.r, %latch ]
  %a3.o = phi i32 [ 0, %entry ], [ %a3.r, %latch ]
  %a2.o = phi i32 [ 0, %entry ], [ %a2.r, %latch ]
  %a1.o = phi i32 [ 0, %entry ], [ %a1.r, %latch ]
  %c = phi i64 [ %chunks, %entry ], [ %c.next, %latch ]
  %q = phi ptr [ %p, %entry ], [ %q.next, %latch ]
  %a0.o = phi i32 [ 0, %entry ], [ %a0.r, %latch ]
  %b0.o = phi i32 [ 0, %entry ], [ %b0.r, %latch ]
  br label %loop
loop:
  %ptr = phi ptr [ %q, %outer ], [ %ptr.next, %loop ]
  %n.cur = phi i64 [ 5552, %outer ], [ %n.next, %loop ]
  %a0 = phi i32 [ %a0.o, %outer ], [ %a0.next, %loop ]
  %a1 = phi i32 [ %a1.o, %outer ], [ %a1.next, %loop ]
  %a2 = phi i32 [ %a2.o, %outer ], [ %a2.next, %loop ]
  %a3 = phi i32 [ %a3.o, %outer ], [ %a3.next, %loop ]
  %b0 = phi i32 [ %b0.o, %outer ], [ %b0.next, %loop ]
  %b1 = phi i32 [ %b1.o, %outer ], [ %b1.next, %loop ]
  %b2 = phi i32 [ %b2.o, %outer ], [ %b2.next, %loop ]
  %b3 = phi i32 [ %b3.o, %outer ], [ %b3.next, %loop ]
  %ptr.next = getelementptr inbounds nuw i8, ptr %ptr, i64 4
  %n.next = add nsw i64 %n.cur, -1
  %g0 = getelementptr inbounds nuw i8, ptr %ptr, i64 0
  %l0 = load i8, ptr %g0, align 1
  %x0 = zext i8 %l0 to i32
  %g1 = getelementptr inbounds nuw i8, ptr %ptr, i64 1
  %l1 = load i8, ptr %g1, align 1
  %x1 = zext i8 %l1 to i32
  %g2 = getelementptr inbounds nuw i8, ptr %ptr, i64 2
  %l2 = load i8, ptr %g2, align 1
  %x2 = zext i8 %l2 to i32
  %g3 = getelementptr inbounds nuw i8, ptr %ptr, i64 3
  %l3 = load i8, ptr %g3, align 1
  %x3 = zext i8 %l3 to i32
  %a0.next = add i32 %a0, %x0
  %a1.next = add i32 %a1, %x1
  %a2.next = add i32 %a2, %x2
  %a3.next = add i32 %a3, %x3
  %b0.next = add i32 %b0, %a0.next
  %b1.next = add i32 %b1, %a1.next
  %b2.next = add i32 %b2, %a2.next
  %b3.next = add i32 %b3, %a3.next
  %done = icmp eq i64 %n.next, 0
  br i1 %done, label %latch, label %loop
latch:
  %a0.r = urem i32 %a0.next, 65521
  %a1.r = urem i32 %a1.next, 65521
  %a2.r = urem i32 %a2.next, 65521
  %a3.r = urem i32 %a3.next, 65521
  %b0.r = urem i32 %b0.next, 65521
  %b1.r = urem i32 %b1.next, 65521
  %b2.r = urem i32 %b2.next, 65521
  %b3.r = urem i32 %b3.next, 65521
  %q.next = getelementptr inbounds nuw i8, ptr %q, i64 22208
  %c.next = add i64 %c, -1
  %cdone = icmp eq i64 %c.next, 0
  br i1 %cdone, label %exit, label %outer
exit:
  %s0 = add i32 %a0.r, %a1.r
  %s1 = add i32 %s0, %a2.r
  %s2 = add i32 %s1, %a3.r
  %t1 = shl i32 %b1.r, 1
  %t2 = mul i32 %b2.r, 3
  %u0 = add i32 %b0.r, %t1
  %u1 = add i32 %u0, %t2
  %u2 = add i32 %u1, %b3.r
  store i32 %s2, ptr %out, align 4
  %o1 = getelementptr inbounds i8, ptr %out, i64 4
  store i32 %u2, ptr %o1, align 4
  ret void
}
