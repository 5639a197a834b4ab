use std::hint::black_box as bb;
fn bytes(n: usize, seed: u32) -> Vec<u8> {
    let mut x = seed; (0..n).map(|_| { x = x.wrapping_mul(1103515245).wrapping_add(12345); (x >> 16) as u8 }).collect()
}
#[unsafe(no_mangle)] #[inline(never)]
pub fn w_adler2(d: &[u8]) -> u32 { let mut a = adler2::Adler32::new(); a.write_slice(d); a.checksum() }
#[unsafe(no_mangle)] #[inline(never)]
pub fn w_crc32fast(d: &[u8]) -> u32 { let mut h = crc32fast::Hasher::new(); h.update(d); h.finalize() }
fn main() {
    let w = std::env::args().nth(1).unwrap();
    let d = bytes(1 << 20, 5);
    let r = match w.as_str() { "adler2" => w_adler2(bb(&d)), "crc32fast" => w_crc32fast(bb(&d)), _ => panic!() };
    println!("{w} {r:08x}");
}
