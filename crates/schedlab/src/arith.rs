//! Exact products and quotients that would overflow 64 bits only in rare
//! cases, in 64-bit arithmetic when they fit. Widening every operation to
//! 128 bits is free natively but in WebAssembly a 128-bit multiply or
//! divide is a library call (`__multi3`, `__udivti3`): on the hot path
//! (vruntime, PELT decay, segment rates) they cost the browser about 5% of
//! its event rate. So is `checked_mul` there (LLVM widens the overflow
//! test to 128 bits), so whether a product fits is told from the operands'
//! leading zeros. Each function returns exactly what the 128-bit
//! expression would.

/// Whether `a * b` surely fits in 64 bits: `a < 2^(64-za)` and
/// `b < 2^(64-zb)`, so the product is below `2^(128-za-zb)`.
#[inline]
pub fn mul_fits(a: u64, b: u64) -> bool {
    a.leading_zeros() + b.leading_zeros() >= 64
}

/// `a * b / c` rounded down, truncated to 64 bits as `as u64` would;
/// callers divide by what cannot be 0, as with `/`.
#[inline]
pub fn mul_div(a: u64, b: u64, c: u64) -> u64 {
    if mul_fits(a, b) {
        a * b / c
    } else {
        (a as u128 * b as u128 / c as u128) as u64
    }
}

/// `(a * b) >> shift`, truncated to 64 bits as `as u64` would.
#[inline]
pub fn mul_shr(a: u64, b: u64, shift: u32) -> u64 {
    if mul_fits(a, b) {
        (a * b) >> shift
    } else {
        ((a as u128 * b as u128) >> shift) as u64
    }
}

/// `a * b` as an i128, multiplying in 64 bits when the product fits.
#[inline]
pub fn wide_mul(a: i64, b: i64) -> i128 {
    // One bit more than unsigned: the product's magnitude below 2^63.
    if a.unsigned_abs().leading_zeros() + b.unsigned_abs().leading_zeros() >= 65 {
        (a * b) as i128
    } else {
        a as i128 * b as i128
    }
}

/// `a * b` for 128-bit operands, multiplying in 64 bits when both fit
/// there and the product does ([`wide_mul`]).
#[inline]
pub fn mul_i128(a: i128, b: i128) -> i128 {
    match (i64::try_from(a), i64::try_from(b)) {
        (Ok(a), Ok(b)) => wide_mul(a, b),
        _ => a * b,
    }
}

/// `a * b / c` truncated toward zero, as the 128-bit expression is, in
/// 64 bits when the operands and the product fit there; `c` must not be 0.
#[inline]
pub fn mul_div_i128(a: i128, b: i128, c: i128) -> i128 {
    if let (Ok(a), Ok(b), Ok(c)) = (i64::try_from(a), i64::try_from(b), i64::try_from(c)) {
        if a.unsigned_abs().leading_zeros() + b.unsigned_abs().leading_zeros() >= 65 {
            // None only for c == 0 (which the 128-bit path reports too) and
            // i64::MIN / -1 (which it computes).
            if let Some(q) = (a * b).checked_div(c) {
                return q as i128;
            }
        }
    }
    a * b / c
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn any_magnitude() -> impl Strategy<Value = u64> {
        // Small and huge values alike, so both paths are taken.
        (0u32..64, any::<u64>()).prop_map(|(bits, v)| if bits == 0 { 0 } else { v >> (64 - bits) })
    }

    proptest! {
        #[test]
        fn each_equals_its_128_bit_expression(
            a in any_magnitude(), b in any_magnitude(), c in any_magnitude(), shift in 0u32..64,
            x in any::<i64>(), y in any::<i64>(),
        ) {
            let c = c.max(1);
            prop_assert_eq!(mul_div(a, b, c), (a as u128 * b as u128 / c as u128) as u64);
            prop_assert_eq!(mul_shr(a, b, shift), ((a as u128 * b as u128) >> shift) as u64);
            prop_assert!(!mul_fits(a, b) || a.checked_mul(b).is_some());
            prop_assert_eq!(wide_mul(x, y), x as i128 * y as i128);
            // An operand beyond 64 bits takes the 128-bit path.
            let (big, small) = (((x >> 24) as i128) << 40, (y >> 20) as i128);
            prop_assert_eq!(mul_i128(big, small), big * small);
            prop_assert_eq!(mul_i128(x as i128, a as i128), x as i128 * a as i128);
            prop_assert_eq!(wide_mul(x >> 20, y >> 30), (x >> 20) as i128 * (y >> 30) as i128);
            let (sx, sy) = ((x >> 30) as i128, (y >> 34) as i128);
            let sc = (a as i64 >> (shift % 40)).max(1) as i128 * if x < 0 { -1 } else { 1 };
            prop_assert_eq!(mul_div_i128(sx, sy, sc), sx * sy / sc);
            prop_assert_eq!(mul_div_i128(big, small, sc), big * small / sc);
            prop_assert_eq!(mul_div_i128(x as i128, y as i128, sc), x as i128 * y as i128 / sc);
        }
    }
}
