//! Serde helpers for numbers that may be missing: JSON has no NaN, so serde_json writes
//! `null` for a non-finite float; these helpers read `null` back as NaN, so that results with
//! masked values survive a JSON round trip.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

fn back(x: Option<f64>) -> f64 {
    x.unwrap_or(f64::NAN)
}

/// `Vec<f64>` with NaN ↔ null.
pub mod vec {
    use super::*;

    /// Serialize (NaN becomes null through serde_json).
    pub fn serialize<S: Serializer>(v: &[f64], s: S) -> Result<S::Ok, S::Error> {
        v.serialize(s)
    }

    /// Deserialize, null → NaN.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
        Ok(Vec::<Option<f64>>::deserialize(d)?
            .into_iter()
            .map(back)
            .collect())
    }
}

/// `Option<Vec<[[f64; 2]; 2]>>` with NaN ↔ null.
pub mod opt_tensors {
    use super::*;

    type Tensors = Option<Vec<[[f64; 2]; 2]>>;

    /// Serialize.
    pub fn serialize<S: Serializer>(
        v: &Option<Vec<[[f64; 2]; 2]>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        v.serialize(s)
    }

    /// Deserialize, null → NaN.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Tensors, D::Error> {
        type Plain = Option<Vec<[[Option<f64>; 2]; 2]>>;
        Ok(Plain::deserialize(d)?.map(|v| {
            v.into_iter()
                .map(|t| {
                    [
                        [back(t[0][0]), back(t[0][1])],
                        [back(t[1][0]), back(t[1][1])],
                    ]
                })
                .collect()
        }))
    }
}

/// `Option<Vec<[f64; 2]>>` with NaN ↔ null.
pub mod opt_pairs {
    use super::*;

    /// Serialize.
    pub fn serialize<S: Serializer>(v: &Option<Vec<[f64; 2]>>, s: S) -> Result<S::Ok, S::Error> {
        v.serialize(s)
    }

    /// Deserialize, null → NaN.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<[f64; 2]>>, D::Error> {
        type Plain = Option<Vec<[Option<f64>; 2]>>;
        Ok(Plain::deserialize(d)?
            .map(|v| v.into_iter().map(|t| [back(t[0]), back(t[1])]).collect()))
    }
}

/// `f64` with NaN ↔ null.
pub mod num {
    use super::*;

    /// Serialize.
    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        v.serialize(s)
    }

    /// Deserialize, null → NaN.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Ok(back(Option::<f64>::deserialize(d)?))
    }
}
