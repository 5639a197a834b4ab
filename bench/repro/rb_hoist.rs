// Loads of a table whose address escaped (hashbrown: `map` passed to reserve_rehash) are not
// hoisted out of the loop: the report call in the loop may write it. Panic mode hoists them.
pub struct Table { ctrl: *const u64, mask: usize, items: usize }
unsafe extern "Rust" { safe fn escape(t: &mut Table); }
#[unsafe(no_mangle)]
pub fn rb(keys: &[u64], ctrl: *const u64, mask: usize) -> u64 {
    let mut t = Table { ctrl, mask, items: 0 };
    escape(&mut t);
    let mut sum = 0u64;
    for &k in keys {
        if t.items == 0 { continue; }
        let i = (k as usize & t.mask) + 1; // checked add
        sum ^= unsafe { *t.ctrl.add(i) };
    }
    sum
}
