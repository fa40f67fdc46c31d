//! Processor state that numerical code must look after.
//!
//! faer's wide-vector (AVX/AVX-512) kernels can leave the upper halves of the vector registers
//! dirty. Scalar and SSE code that runs afterwards on the same thread — libm's transcendental
//! functions, our own loops — then pays a state-transition penalty on every instruction: on the
//! project's Xeon a sensitivity build went from 0.20 s to 2.8 s after one faer product. Call
//! [`clear_upper_vector_state`] after a faer call and before long scalar loops (and at the start
//! of rayon tasks that follow one). It changes no values.

/// Clear the upper halves of the vector registers (`vzeroupper`) on this thread.
///
/// Why: faer's AVX-512 kernels can leave the upper register state dirty; the scalar
/// transcendental code after them (libm's `ln`/`atan`, our SSE2-compiled kernels) then runs
/// ~14× slower on this Xeon (measured: a 100-station build went from 0.20 s to 2.8 s after one
/// faer matrix product). Executing `vzeroupper` before the kernel loops restores the speed;
/// it changes no values.
#[inline]
pub fn clear_upper_vector_state() {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx") {
            // SAFETY: the instruction exists (AVX detected at run time) and only zeroes bits
            // 128 and up of the vector registers, which no live Rust value occupies between
            // statements.
            unsafe { zeroupper() }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn zeroupper() {
    std::arch::x86_64::_mm256_zeroupper();
}
