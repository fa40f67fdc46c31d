//! The `METHODS` table: the six methods once, with what the report, the panels, the catalog
//! and the studio each need to know of them.

use super::keys::*;

/// One method as every layer above the science names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MethodInfo {
    /// The catalog's id (`hydrogeo-studio read` answers with it).
    pub id: &'static str,
    /// The report's section heading.
    pub name: &'static str,
    /// The panel's heading.
    pub title: &'static str,
    /// The short name on the rail.
    pub short: &'static str,
    /// The studio module (panel) key, also each step's `module`.
    pub panel: &'static str,
    /// The input roles it reads.
    pub roles: &'static [&'static str],
    /// The role a file its reader recognises is added under.
    pub main_role: &'static str,
    /// The artifacts its steps make.
    pub products: &'static [&'static str],
    /// The artifact holding its result (its model, map or processed line).
    pub result: &'static str,
    /// Its name inside a sentence ("no joint inversion: ERT, TDEM were …").
    pub prose: &'static str,
    /// What the roles may hold, for the "nothing loaded" hint.
    pub formats: &'static str,
}

/// ERT.
pub const ERT: MethodInfo = MethodInfo {
    id: "ert",
    name: "Electrical resistivity tomography (ERT)",
    title: "Electrical resistivity (ERT)",
    short: "ERT",
    panel: "ert",
    roles: &[ERT_FILES, ERT_FILE, ELECTRODE_FILE, TOPOGRAPHY_FILE],
    main_role: ERT_FILES,
    products: &[
        ERT_DATA,
        INVERSION_RESULTS,
        EVALUATION_RESULTS,
        WATER_CONTENT,
        STRUCTURE_RESULTS,
    ],
    result: INVERSION_RESULTS,
    prose: "ERT",
    formats: "pyGIMLi/BERT unified (.dat/.ohm/.shm), E4D, Syscal (.csv/.bin), ABEM/Lund (.ohm), ABEM Terrameter LS (.txt), Res2DInv, MPT DAS-1, AGI SuperSting (.stg), CSV a,b,m,n,R",
};

/// Seismic refraction.
pub const SEISMIC: MethodInfo = MethodInfo {
    id: "seismic",
    name: "Seismic refraction",
    title: "Seismic refraction",
    short: "Seismic",
    panel: "seismic",
    roles: &[
        SEISMIC_FILE,
        SEISMIC_FILES,
        SEGY_FILE,
        SEG2_FILES,
        GEOPHONE_FILE,
        TOPOGRAPHY_FILE,
    ],
    main_role: SEISMIC_FILE,
    products: &[
        SEISMIC_PICKS,
        SEISMIC_TRAVELTIMES,
        SEISMIC_RESULTS,
        SEISMIC_EVALUATION,
        SEISMIC_STRUCTURE,
    ],
    result: SEISMIC_RESULTS,
    prose: "seismic refraction",
    formats: "pyGIMLi travel times (.sgt), CSV source_x,receiver_x,time, SEG-2 and SEG-Y shot gathers",
};

/// TDEM.
pub const TDEM: MethodInfo = MethodInfo {
    id: "tdem",
    name: "Time-domain electromagnetics (TDEM)",
    title: "Time-domain EM (TDEM)",
    short: "EM",
    panel: "em",
    roles: &[TDEM_FILE, TDEM_GEOMETRY_FILE],
    main_role: TDEM_FILE,
    products: &[
        TDEM_DATA,
        TDEM_RESULTS,
        TDEM_EVALUATION,
        PLAN_MAPS,
        WATER_CONTENT,
    ],
    result: TDEM_RESULTS,
    prose: "TDEM",
    formats: "time,response CSV, time,snd1,snd2,… with a geometry table, TEM-FAST (.tem), Universal Sounding Format (.usf)",
};

/// MT.
pub const MT: MethodInfo = MethodInfo {
    id: "mt",
    name: "Magnetotellurics (MT)",
    title: "Magnetotellurics (MT)",
    short: "MT",
    panel: "mt",
    roles: &[MT_FILES, MT_DIR],
    main_role: MT_FILES,
    products: &[MT_DATA, MT_RESULTS, MT_EVALUATION, WATER_CONTENT],
    result: MT_RESULTS,
    prose: "MT",
    formats: "EDI, EMTF XML, Z-files (.zmm/.zss/.zrr), BIRRP J-files, Zonge AVG",
};

/// Gravity and magnetics.
pub const GRAVMAG: MethodInfo = MethodInfo {
    id: "gravmag",
    name: "Gravity and magnetics",
    title: "Gravity and magnetics",
    short: "Grav/Mag",
    panel: "gravmag",
    roles: &[GRAVMAG_FILE],
    main_role: GRAVMAG_FILE,
    products: &[GRAVMAG_DATA, GRAVMAG_RESULTS, GRAVMAG_EVALUATION],
    result: GRAVMAG_RESULTS,
    prose: "gravity/magnetics",
    formats: "station tables x,y,value[,z] (CSV/TXT), lat/lon tables",
};

/// GPR.
pub const GPR: MethodInfo = MethodInfo {
    id: "gpr",
    name: "Ground-penetrating radar (GPR)",
    title: "Ground-penetrating radar (GPR)",
    short: "GPR",
    panel: "gpr",
    roles: &[GPR_FILE],
    main_role: GPR_FILE,
    products: &[GPR_DATA, GPR_RESULTS],
    result: GPR_RESULTS,
    prose: "GPR",
    formats: "GSSI DZT, pulseEKKO DT1+HD, MALA rd3/rd7+rad, SEG-Y",
};

/// The six methods, in dependency (and rail, and report) order.
pub const METHODS: &[MethodInfo] = &[ERT, SEISMIC, TDEM, MT, GRAVMAG, GPR];

/// The method with catalog id `id`.
pub fn by_id(id: &str) -> Option<&'static MethodInfo> {
    METHODS.iter().find(|m| m.id == id)
}

/// The method whose panel (module) key is `panel`.
pub fn by_panel(panel: &str) -> Option<&'static MethodInfo> {
    METHODS.iter().find(|m| m.panel == panel)
}

/// The report's sections, in order: the project, each method, then what was combined.
pub fn report_sections() -> Vec<(&'static str, &'static str)> {
    let mut v = vec![("project", "Project")];
    v.extend(METHODS.iter().map(|m| (m.panel, m.name)));
    v.push((crate::catalog::hydro::MODULE, "Hydrological model"));
    v.push(("fusion", "Combining the methods"));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_is_listed_once_and_reads_its_main_role() {
        for m in METHODS {
            assert_eq!(METHODS.iter().filter(|n| n.id == m.id).count(), 1);
            assert!(m.roles.contains(&m.main_role), "{}", m.id);
            assert!(m.products.contains(&m.result), "{}", m.id);
        }
        assert_eq!(by_id("tdem").map(|m| m.panel), Some("em"));
        assert_eq!(by_panel("em").map(|m| m.id), Some("tdem"));
        assert_eq!(report_sections().len(), 9);
    }
}
