//! Small deterministic PRNG (PCG-XSH-RR 64/32 + SplitMix64 seeding): every run
//! is reproducible from its seed.

/// PCG32 generator.
#[derive(Clone, Debug)]
pub struct Pcg32 {
    state: u64,
    inc: u64,
}

/// SplitMix64 finaliser, also used as the ECMP hash mixer.
pub fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Pcg32 {
    /// Seeded generator; `stream` selects an independent sequence.
    pub fn new(seed: u64, stream: u64) -> Self {
        let mut g = Self { state: 0, inc: (mix64(stream) << 1) | 1 };
        g.next_u32();
        g.state = g.state.wrapping_add(mix64(seed));
        g.next_u32();
        g
    }
    /// Next 32 random bits.
    pub fn next_u32(&mut self) -> u32 {
        let old = self.state;
        self.state = old.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(self.inc);
        let xorshifted = (((old >> 18) ^ old) >> 27) as u32;
        let rot = (old >> 59) as u32;
        xorshifted.rotate_right(rot)
    }
    /// Uniform in `[0, n)` (n > 0), unbiased.
    pub fn below(&mut self, n: u32) -> u32 {
        let threshold = n.wrapping_neg() % n;
        loop {
            let r = self.next_u32();
            if r >= threshold {
                return r % n;
            }
        }
    }
    /// True with probability `ppm` / 1 000 000.
    pub fn chance_ppm(&mut self, ppm: u32) -> bool {
        ppm > 0 && self.below(1_000_000) < ppm
    }
    /// Fisher–Yates shuffle.
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i as u32 + 1) as usize;
            v.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_roughly_uniform() {
        let mut a = Pcg32::new(7, 1);
        let mut b = Pcg32::new(7, 1);
        let va: Vec<u32> = (0..10).map(|_| a.next_u32()).collect();
        let vb: Vec<u32> = (0..10).map(|_| b.next_u32()).collect();
        assert_eq!(va, vb);
        let mut c = Pcg32::new(7, 2);
        assert_ne!(va[0], c.next_u32());
        let mut h = [0u32; 10];
        let mut g = Pcg32::new(1, 1);
        for _ in 0..100_000 {
            h[g.below(10) as usize] += 1;
        }
        assert!(h.iter().all(|&x| (9_000..11_000).contains(&x)), "{h:?}");
        let hits = (0..1_000_000).filter(|_| g.chance_ppm(10_000)).count();
        assert!((9_000..11_000).contains(&hits), "{hits}");
    }
}
