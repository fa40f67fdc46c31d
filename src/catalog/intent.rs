//! What the goal asks for, read from the user's words: the products a request can name, and
//! which tools make each. A run that was asked for water content and did not make it is not a
//! success, whatever else it did.

use super::kit::keys;

/// A product a request can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Requested {
    /// The artifact key that delivers it.
    pub key: &'static str,
    /// How the report names it.
    pub name: &'static str,
    /// The tools that make it, in preference order.
    pub producers: &'static [&'static str],
    /// What is missing when a step upstream of its producers failed, in words a reader can
    /// act on ("no resistivity model was recovered to convert").
    pub made_from: &'static str,
    /// Why this version cannot make it at all, when no producer is registered.
    pub no_tool: &'static str,
}

/// Every product a request can name, with the words that name it.
pub const PRODUCTS: &[(&[&str], Requested)] = &[
    (
        &[
            "water content",
            "moisture",
            "saturation",
            "water-content",
            "soil water",
        ],
        Requested {
            key: keys::WATER_CONTENT,
            name: "water content",
            producers: &[
                "convert_water_content",
                "convert_tdem_water_content",
                "convert_mt_water_content",
            ],
            made_from: "no resistivity model was recovered to convert",
            no_tool: "no tool in this version of the studio makes it",
        },
    ),
    (
        &[
            "plan view",
            "plan-view",
            "spatial map",
            "spatial distribution",
            "map of",
            "maps of",
        ],
        Requested {
            key: keys::PLAN_MAPS,
            name: "a plan-view map",
            producers: &["map_tdem_plan_view"],
            made_from: "no TDEM soundings were inverted to map",
            no_tool: "no tool in this version of the studio makes it",
        },
    ),
    (
        &["climate", "rainfall", "precipitation", "weather"],
        Requested {
            key: "climate_data",
            name: "climate data",
            producers: &["fetch_climate"],
            made_from: "no climate data were fetched",
            no_tool: "no tool in this version fetches it: fetch_climate needs a network source of climate data and none is configured (climate data are not read from the project's files either)",
        },
    ),
    (
        &["3d model", "3-d model", "three-dimensional"],
        Requested {
            key: keys::MODEL_3D,
            name: "a 3D model",
            producers: &["invert_gravmag"],
            made_from: "no gravity or magnetic data were read to invert",
            no_tool: "no tool in this version of the studio makes it",
        },
    ),
];

/// The products `goal` names, in the order of [`PRODUCTS`].
pub fn requested(goal: &str) -> Vec<Requested> {
    let g = goal.to_lowercase();
    PRODUCTS
        .iter()
        .filter(|(words, _)| words.iter().any(|w| g.contains(w)))
        .map(|(_, r)| *r)
        .collect()
}

/// Whether `goal` asks for the product delivered as `key`.
pub fn wants(goal: &str, key: &str) -> bool {
    requested(goal).iter().any(|r| r.key == key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_are_read_from_the_goal() {
        let r = requested(
            "Where is the water table, how did the plume change, and what is the water content?",
        );
        assert_eq!(
            r.iter().map(|r| r.key).collect::<Vec<_>>(),
            vec![keys::WATER_CONTENT]
        );
        assert!(wants(
            "Give me a spatial map of resistivity and the soil moisture",
            keys::PLAN_MAPS
        ));
        assert!(requested("Invert the line").is_empty());
    }
}
