//! Arithmetic-heavy workloads that never overflow, written with plain operators, for `bench`.
//!
//! `bench` compiles this file with `-Coverflow-checks=off`, `on` and `report` at opt-level 2 and
//! counts the instructions of `workloads <name>` under callgrind. Every input goes through
//! `black_box()` so that the compiler cannot fold the work away, and every workload prints its
//! result so that the three builds can be checked against each other.

use std::hint::black_box;

/// Deterministic bytes: a linear congruential generator, with wrapping arithmetic on purpose.
fn bytes(len: usize, seed: u32) -> Vec<u8> {
    let mut state = seed;
    (0..len)
        .map(|_| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (state >> 24) as u8
        })
        .collect()
}

/// Fletcher-32 over bytes, reduced modulo 65535 at every step.
fn checksum(data: &[u8], rounds: u32) -> u64 {
    let mut result = 0;
    for _ in 0..rounds {
        let (mut s1, mut s2) = (1u32, 0u32);
        for &b in black_box(data) {
            s1 = (s1 + b as u32) % 65535;
            s2 = (s2 + s1) % 65535;
        }
        result += ((s2 << 16) | s1) as u64;
    }
    result
}

/// A polynomial string hash modulo a prime, over 8-byte keys.
fn hash(data: &[u8], rounds: u32) -> u64 {
    const P: u64 = 1_000_000_007;
    let mut total = 0;
    for _ in 0..rounds {
        for key in black_box(data).chunks(8) {
            let mut h = 0u64;
            for &b in key {
                h = (h * 131 + b as u64) % P;
            }
            total = (total + h) % P;
        }
    }
    total
}

/// A 48x48 integer matrix multiply; entries below 100 keep every sum far from `i32::MAX`.
fn matmul(data: &[u8], rounds: u32) -> i64 {
    const N: usize = 48;
    let a: Vec<i32> = data[..N * N].iter().map(|&b| (b % 100) as i32).collect();
    let b: Vec<i32> = data[N * N..2 * N * N].iter().map(|&b| (b % 100) as i32 - 50).collect();
    let mut c = vec![0i32; N * N];
    let mut total = 0i64;
    for _ in 0..rounds {
        let (a, b) = (black_box(&a), black_box(&b));
        for i in 0..N {
            for j in 0..N {
                let mut sum = 0;
                for k in 0..N {
                    sum += a[i * N + k] * b[k * N + j];
                }
                c[i * N + j] = sum;
            }
        }
        total += c.iter().map(|&x| x as i64).sum::<i64>();
    }
    total
}

/// Adds two 256-limb numbers with explicit carries, as bignum code does.
fn bignum(data: &[u8], rounds: u32) -> u64 {
    const LIMBS: usize = 256;
    let limb = |i: usize| u32::from_le_bytes([data[4 * i], data[4 * i + 1], data[4 * i + 2], 0]);
    let a: Vec<u32> = (0..LIMBS).map(limb).collect();
    let b: Vec<u32> = (LIMBS..2 * LIMBS).map(limb).collect();
    let mut sum = vec![0u32; LIMBS];
    let mut total = 0u64;
    for _ in 0..rounds {
        let (a, b) = (black_box(&a), black_box(&b));
        let mut carry = 0u64;
        for i in 0..LIMBS {
            let s = a[i] as u64 + b[i] as u64 + carry;
            sum[i] = (s & 0xffff_ffff) as u32;
            carry = s >> 32;
        }
        total = (total + sum[LIMBS / 2] as u64 + carry) % 1_000_000_007;
    }
    total
}

/// Parses comma-separated decimal numbers of up to 9 digits and sums them.
fn parse(text: &[u8], rounds: u32) -> u64 {
    let mut total = 0u64;
    for _ in 0..rounds {
        let mut value = 0u32;
        for &c in black_box(text) {
            if c.is_ascii_digit() {
                value = value * 10 + (c - b'0') as u32;
            } else {
                total = (total + value as u64) % 1_000_000_007;
                value = 0;
            }
        }
        total = (total + value as u64) % 1_000_000_007;
    }
    total
}

/// Blends two 8-bit images with an alpha in `0..=256`, as image code does: an element-wise loop,
/// whose checks `-Coverflow-checks=report` can merge so that it vectorizes.
fn blend(data: &[u8], rounds: u32) -> u64 {
    let (a, b) = data.split_at(data.len() / 2);
    let mut out = vec![0u8; a.len()];
    let mut total = 0u64;
    for round in 0..rounds {
        let alpha = black_box(round as u16 % 257);
        blend_row(&mut out, black_box(a), black_box(b), alpha);
        total += out[round as usize % out.len()] as u64;
    }
    total
}

/// `blend`'s loop, in a function that is given the slices: a loop over `black_box(a)` itself
/// would read through a pointer that LLVM must assume a report call may write, and keep its
/// reports in place.
#[inline(never)]
fn blend_row(out: &mut [u8], a: &[u8], b: &[u8], alpha: u16) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = ((x as u16 * alpha + y as u16 * (256 - alpha)) >> 8) as u8;
    }
}

/// Counts the bytes of `data`, as a compressor does for its Huffman tables: a loop of counters
/// in an array, which panic mode's checks keep from being unrolled.
fn histogram(data: &[u8], rounds: u32) -> u64 {
    let mut counts = [0u32; 256];
    for _ in 0..rounds {
        count_bytes(black_box(data), &mut counts);
    }
    counts.iter().zip(0..).map(|(&c, i)| c as u64 * i).sum()
}

/// `histogram`'s loop, in a function of its own, as `blend_row`.
#[inline(never)]
fn count_bytes(data: &[u8], counts: &mut [u32; 256]) {
    for &b in data {
        counts[b as usize] += 1;
    }
}

/// Adler-32 as the textbook writes it (RFC 1950, zlib's `adler32.c`): blocks of at most 5552
/// bytes (`NMAX`, the most that cannot overflow a `u32` sum from any reduced start), each summed
/// byte by byte from a slice iterator, both sums reduced modulo 65521 after each block. Written
/// here, not taken from a crate, as the held-out variant of `bench/crates`' `adler2`.
fn adler32(data: &[u8], rounds: u32) -> u64 {
    let mut total = 0;
    for _ in 0..rounds {
        total += adler32_update(1, black_box(data)) as u64;
    }
    total
}

#[inline(never)]
fn adler32_update(adler: u32, data: &[u8]) -> u32 {
    const MOD: u32 = 65521;
    const NMAX: usize = 5552;
    let (mut a, mut b) = (adler & 0xffff, adler >> 16);
    for block in data.chunks(NMAX) {
        for &byte in block {
            a += byte as u32;
            b += a;
        }
        a %= MOD;
        b %= MOD;
    }
    (b << 16) | a
}

/// Comma-separated numbers of 1 to 9 digits, built from `data`.
fn numbers(data: &[u8]) -> Vec<u8> {
    let mut text = Vec::new();
    for chunk in data.chunks(10) {
        let digits = 1 + chunk[0] as usize % 9;
        text.extend(chunk[1..].iter().take(digits).map(|b| b'0' + b % 10));
        text.push(b',');
    }
    text
}

fn main() {
    let name = std::env::args().nth(1).unwrap_or_default();
    let data = bytes(64 * 1024, black_box(7));
    let result = match name.as_str() {
        "checksum" => checksum(&data, 40),
        "hash" => hash(&data, 40),
        "matmul" => matmul(&data, 20) as u64,
        "bignum" => bignum(&data, 8000),
        "parse" => parse(&numbers(&data), 40),
        "blend" => blend(&data, 40),
        "histogram" => histogram(&data, 40),
        "adler32" => adler32(&data, 40),
        _ => {
            eprintln!("usage: workloads checksum|hash|matmul|bignum|parse|blend|histogram|adler32");
            std::process::exit(2);
        }
    };
    println!("{name} {result}");
}
