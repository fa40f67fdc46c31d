//! Every capability a run has, described well enough to be chosen.
//!
//! A tool is an offer: what it needs (`requires`), what it makes (`produces`), and one
//! sentence for a reader who does not know this code base — the model. A tool whose
//! requirements are unmet is never offered, which makes an impossible sequence
//! unrepresentable rather than merely discouraged. Registration order is dependency order,
//! and it is the fallback policy: without a model the first runnable tool runs.

use std::path::PathBuf;
use std::sync::Arc;

use super::context::RunContext;
use super::product::SharedProduct;
use super::rules::{RecoveryRules, TableRole};
use super::step::{DecidedBy, StepStatus};

/// What a handler hands back besides its summary.
#[derive(Default, Debug)]
pub struct Outputs {
    /// Artifacts to store: key, product, optional description (defaults to the product's).
    pub products: Vec<(String, SharedProduct, Option<String>)>,
    /// Figures drawn: path, caption.
    pub figures: Vec<(PathBuf, String)>,
}

impl Outputs {
    /// Nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add an artifact.
    pub fn put(mut self, key: &str, product: SharedProduct) -> Self {
        self.products.push((key.to_string(), product, None));
        self
    }

    /// Add an artifact from a concrete value.
    pub fn with<P: super::product::Product>(self, key: &str, product: P) -> Self {
        self.put(key, Arc::new(product))
    }

    /// Add an artifact with a description for the transcript.
    pub fn put_described(mut self, key: &str, product: SharedProduct, description: &str) -> Self {
        self.products
            .push((key.to_string(), product, Some(description.to_string())));
        self
    }

    /// Add a figure.
    pub fn figure(mut self, path: PathBuf, caption: &str) -> Self {
        self.figures.push((path, caption.to_string()));
        self
    }

    /// Add a figure that may not have been drawn (`None`: nothing is added; the failure was
    /// recorded where it happened).
    pub fn figure_if(self, path: Option<PathBuf>, caption: &str) -> Self {
        match path {
            Some(p) => self.figure(p, caption),
            None => self,
        }
    }
}

/// A handler's result: the sentence of what it found, and what it made. An `Err` is recorded
/// as a failed step, never raised.
pub type ToolResult = anyhow::Result<(String, Outputs)>;

/// The function that does a tool's work.
pub type Handler = Arc<dyn Fn(&mut RunContext) -> ToolResult + Send + Sync>;

/// A condition on the run beyond `requires`.
pub type Gate = Arc<dyn Fn(&RunContext) -> bool + Send + Sync>;

/// One capability the controller can choose.
#[derive(Clone)]
pub struct Tool {
    /// Unique name, as the model writes it.
    pub name: String,
    /// What it is for, written for a model that does not know this code base.
    pub description: String,
    /// The work.
    pub handler: Handler,
    /// Artifacts that must exist.
    pub requires: Vec<String>,
    /// Artifacts it makes.
    pub produces: Vec<String>,
    /// What implements it, for the plan.
    pub agent: String,
    /// Short imperative label ("Run ERT inversion").
    pub label: String,
    /// Studio module key (`project`, `ert`, `seismic`, `em`, `mt`, `gravmag`, `gpr`, `report`).
    pub module: String,
    /// Extra condition beyond `requires` (configuration, the goal). A gate that panics counts
    /// as open: a broken gate must not hide a tool the run needs.
    pub when: Option<Gate>,
    /// Whether it may run again after an attempt.
    pub repeatable: bool,
    /// Whether it may be proposed off the standard route when its gate is closed.
    pub proposable: bool,
    /// For an off-route proposal: whether the tool applies to this run at all.
    pub applies: Option<Gate>,
    /// Whether running it cannot be undone (step-by-step's default button is then not
    /// Proceed).
    pub irreversible: bool,
    /// Configuration keys it reads that a recovery, a note or a proposal may change (numbers
    /// and switches between behaviours already implemented; never an input role).
    pub adjusts: Vec<String>,
    /// Coordinate tables among its inputs a generated reader may stand in for.
    pub adapts: Vec<TableRole>,
}

impl std::fmt::Debug for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.name)
            .field("requires", &self.requires)
            .field("produces", &self.produces)
            .finish_non_exhaustive()
    }
}

impl Tool {
    /// A tool with a name, a description and a handler; the rest by builder methods.
    pub fn new(
        name: &str,
        description: &str,
        handler: impl Fn(&mut RunContext) -> ToolResult + Send + Sync + 'static,
    ) -> Self {
        Tool {
            name: name.to_string(),
            description: description.to_string(),
            handler: Arc::new(handler),
            requires: Vec::new(),
            produces: Vec::new(),
            agent: String::new(),
            label: String::new(),
            module: String::new(),
            when: None,
            repeatable: false,
            proposable: true,
            applies: None,
            irreversible: false,
            adjusts: Vec::new(),
            adapts: Vec::new(),
        }
    }

    /// Builder: requirements.
    pub fn requires(mut self, keys: &[&str]) -> Self {
        self.requires = keys.iter().map(|s| s.to_string()).collect();
        self
    }

    /// Builder: products.
    pub fn produces(mut self, keys: &[&str]) -> Self {
        self.produces = keys.iter().map(|s| s.to_string()).collect();
        self
    }

    /// Builder: label.
    pub fn label(mut self, label: &str) -> Self {
        self.label = label.to_string();
        self
    }

    /// Builder: module.
    pub fn module(mut self, module: &str) -> Self {
        self.module = module.to_string();
        self
    }

    /// Builder: agent.
    pub fn agent(mut self, agent: &str) -> Self {
        self.agent = agent.to_string();
        self
    }

    /// Builder: the `when` gate.
    pub fn when(mut self, gate: impl Fn(&RunContext) -> bool + Send + Sync + 'static) -> Self {
        self.when = Some(Arc::new(gate));
        self
    }

    /// Builder: the `applies` gate.
    pub fn applies(mut self, gate: impl Fn(&RunContext) -> bool + Send + Sync + 'static) -> Self {
        self.applies = Some(Arc::new(gate));
        self
    }

    /// Builder: repeatable.
    pub fn repeatable(mut self, yes: bool) -> Self {
        self.repeatable = yes;
        self
    }

    /// Builder: proposable.
    pub fn proposable(mut self, yes: bool) -> Self {
        self.proposable = yes;
        self
    }

    /// Builder: irreversible.
    pub fn irreversible(mut self, yes: bool) -> Self {
        self.irreversible = yes;
        self
    }

    /// Builder: the settings it reads that may change mid-run (input roles are refused by
    /// the recovery whatever a tool declares).
    pub fn adjusts(mut self, keys: &[&str]) -> Self {
        self.adjusts.extend(keys.iter().map(|s| s.to_string()));
        self
    }

    /// Builder: a coordinate table input (`role`) a generated reader may be written for, with
    /// the column count the rewritten table must have and what the columns hold.
    pub fn adapts(mut self, role: &str, columns: usize, meaning: &str) -> Self {
        self.adapts.push(TableRole {
            role: role.to_string(),
            columns,
            meaning: meaning.to_string(),
        });
        self
    }

    /// The label, or the name when there is none.
    pub fn display_label(&self) -> &str {
        if self.label.is_empty() {
            &self.name
        } else {
            &self.label
        }
    }

    /// Requirements that are not satisfied.
    pub fn missing(&self, ctx: &RunContext) -> Vec<String> {
        self.requires
            .iter()
            .filter(|r| !ctx.has(&[r.as_str()]))
            .cloned()
            .collect()
    }

    /// Whether the gate is open (no gate, or a gate that says yes, or one that panicked).
    pub fn gate_open(&self, ctx: &RunContext) -> bool {
        match &self.when {
            None => true,
            Some(g) => {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| g(ctx))).unwrap_or(true)
            }
        }
    }

    /// Whether this tool can run against the run as it stands: requirements met, gate open,
    /// not already attempted (unless repeatable), not left out by the user.
    pub fn available(&self, ctx: &RunContext) -> bool {
        self.missing(ctx).is_empty()
            && (self.repeatable || ctx.attempted(&self.name) == 0)
            && !ctx.skipped(&self.name)
            && self.gate_open(ctx)
    }

    /// Why [`Tool::available`] is false, in words the controller can act on.
    pub fn unavailable_because(&self, ctx: &RunContext) -> String {
        let missing = self.missing(ctx);
        if !missing.is_empty() {
            return format!(
                "it needs {}, which the run has not produced",
                missing.join(", ")
            );
        }
        if !self.repeatable && ctx.attempted(&self.name) > 0 {
            return if ctx.ran(&self.name) {
                "it has already run".into()
            } else {
                "it was already tried and failed; it is not run twice unchanged".into()
            };
        }
        if ctx.skipped(&self.name) {
            return "it was left out".into();
        }
        if !self.gate_open(ctx) {
            return "this run does not call for it (its inputs or the request do not ask for it)"
                .into();
        }
        "it is available".into()
    }

    /// The tool as one line of the controller's menu.
    pub fn offer(&self) -> String {
        let needs = if self.requires.is_empty() {
            "nothing".to_string()
        } else {
            self.requires.join(", ")
        };
        let gives = if self.produces.is_empty() {
            "a side effect".to_string()
        } else {
            self.produces.join(", ")
        };
        format!(
            "- {}: {} (needs: {needs}; gives: {gives})",
            self.name, self.description
        )
    }
}

/// Why a tool could not be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// A nameless tool cannot be chosen.
    #[error("a tool needs a name")]
    NoName,
    /// Two tools of one name: the model could not tell which it chose.
    #[error("a tool named '{0}' is already registered")]
    Duplicate(String),
}

/// The tools of a run, in registration (= dependency) order.
#[derive(Clone, Default, Debug)]
pub struct Registry {
    tools: Vec<Tool>,
}

impl Registry {
    /// No tools.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add `tool`; a nameless tool, or a second tool of a name already registered, is
    /// refused (the first stays).
    pub fn register(&mut self, tool: Tool) -> Result<(), RegistryError> {
        if tool.name.trim().is_empty() {
            return Err(RegistryError::NoName);
        }
        if self.get(&tool.name).is_some() {
            return Err(RegistryError::Duplicate(tool.name));
        }
        self.tools.push(tool);
        Ok(())
    }

    /// The allow-lists of a run with these tools: every setting a tool declares it may have
    /// changed, and every table a tool declares a reader may be written for (each once, in
    /// registration order). A key that names an input role is never among the settings.
    pub fn recovery_rules(&self) -> RecoveryRules {
        let mut rules = RecoveryRules::default();
        for t in &self.tools {
            for k in &t.adjusts {
                if !rules.allows(k) && !super::context::is_input_role(k) {
                    rules.settings.push(k.clone());
                }
            }
            for a in &t.adapts {
                if rules.table(&a.role).is_none() {
                    rules.tables.push(a.clone());
                }
            }
        }
        rules
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// All tools in order.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Every tool that can run now, in registration order.
    pub fn runnable<'a>(&'a self, ctx: &RunContext) -> Vec<&'a Tool> {
        self.tools.iter().filter(|t| t.available(ctx)).collect()
    }

    /// The menu the model chooses from.
    pub fn menu(&self, ctx: &RunContext) -> String {
        let lines: Vec<String> = self.runnable(ctx).iter().map(|t| t.offer()).collect();
        if lines.is_empty() {
            "- (nothing can run against the current state)".into()
        } else {
            lines.join("\n")
        }
    }

    /// Every tool that reads, directly or through others, what `produced` names.
    pub fn downstream(&self, produced: &[String]) -> Vec<String> {
        let mut made: Vec<String> = produced.to_vec();
        let mut out: Vec<String> = Vec::new();
        loop {
            let mut grew = false;
            for t in &self.tools {
                if !out.contains(&t.name) && t.requires.iter().any(|r| made.contains(r)) {
                    out.push(t.name.clone());
                    made.extend(t.produces.iter().cloned());
                    grew = true;
                }
            }
            if !grew {
                return out;
            }
        }
    }
}

/// Run one tool against the run and record the step; never panics, never propagates.
///
/// An unknown name is a skipped step; missing inputs a blocked step; an `Err` or a panic in
/// the handler a failed step with its message; success stores the outputs.
pub fn invoke(
    ctx: &mut RunContext,
    registry: &Registry,
    name: &str,
    reason: &str,
    by: DecidedBy,
) -> StepStatus {
    let Some(tool) = registry.get(name) else {
        let step = ctx.begin(name, reason);
        step.decided_by = by;
        ctx.finish(
            "",
            StepStatus::Skipped,
            &format!("No tool named '{name}'. Choose one that is offered."),
        );
        return StepStatus::Skipped;
    };
    let step = ctx.begin(name, reason);
    step.decided_by = by;
    step.agent = tool.agent.clone();
    step.label = tool.display_label().to_string();
    step.purpose = tool.description.clone();
    step.module = tool.module.clone();
    let missing = tool.missing(ctx);
    if !missing.is_empty() {
        ctx.finish(
            "",
            StepStatus::Blocked,
            &format!(
                "Needs {}, which the run has not produced.",
                missing.join(", ")
            ),
        );
        return StepStatus::Blocked;
    }
    let handler = tool.handler.clone();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handler(ctx)));
    match outcome {
        Ok(Ok((summary, outputs))) => {
            let mut produced = Vec::new();
            for (key, product, description) in outputs.products {
                ctx.put(&key, product, description);
                produced.push(key);
            }
            for (path, caption) in outputs.figures {
                ctx.add_figure(&path, &caption);
            }
            if let Some(s) = ctx.open_step_mut() {
                s.produced = produced;
            }
            let summary = if summary.trim().is_empty() {
                "The step ran and gave no summary of what it found.".to_string()
            } else {
                summary
            };
            ctx.finish(&summary, StepStatus::Ok, "");
            StepStatus::Ok
        }
        Ok(Err(e)) => {
            let interrupted = ctx.cancelled();
            let status = if interrupted {
                StepStatus::Interrupted
            } else {
                StepStatus::Failed
            };
            ctx.finish("", status, &plain_error(&format!("{e:#}")));
            status
        }
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "the tool panicked".into());
            ctx.finish(
                "",
                StepStatus::Failed,
                &format!("internal error in {name}: {msg}"),
            );
            StepStatus::Failed
        }
    }
}

/// A step's error for a reader: one line per cause, without repeated text.
pub fn plain_error(error: &str) -> String {
    error.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::product::JsonProduct;
    use serde_json::Value;

    fn loader() -> Tool {
        Tool::new("load", "Load.", |_| {
            Ok((
                "Loaded 3 files.".into(),
                Outputs::new().with("data", JsonProduct::new("3 files", Value::Null)),
            ))
        })
        .produces(&["data"])
        .label("Load data")
    }

    #[test]
    fn register_refuses_a_duplicate_and_the_nameless() {
        let mut reg = Registry::new();
        reg.register(loader()).unwrap();
        assert_eq!(
            reg.register(Tool::new("load", "Again.", |_| {
                Ok((String::new(), Outputs::new()))
            })),
            Err(RegistryError::Duplicate("load".into()))
        );
        assert_eq!(reg.len(), 1);
        assert_eq!(reg.get("load").unwrap().description, "Load.");
        assert_eq!(
            reg.register(Tool::new(" ", "x", |_| Ok((String::new(), Outputs::new())))),
            Err(RegistryError::NoName)
        );
    }

    #[test]
    fn runnable_tools_follow_requirements() {
        // Seed 001, runnable_tools example.
        let mut reg = Registry::new();
        reg.register(
            Tool::new("needs_data", "Needs data.", |_| {
                Ok((String::new(), Outputs::new()))
            })
            .requires(&["data"]),
        )
        .unwrap();
        let mut ctx = RunContext::new("x");
        assert!(reg.runnable(&ctx).is_empty());
        ctx.put_value("data", JsonProduct::new("d", Value::Null));
        assert_eq!(reg.runnable(&ctx)[0].name, "needs_data");
    }

    #[test]
    fn invoke_records_every_outcome_and_never_propagates() {
        let mut reg = Registry::new();
        reg.register(loader()).unwrap();
        reg.register(Tool::new("boom", "Fails.", |_| {
            anyhow::bail!("no electrodes in file a.dat")
        }))
        .unwrap();
        reg.register(Tool::new("panics", "Panics.", |_| {
            panic!("index out of range")
        }))
        .unwrap();
        reg.register(
            Tool::new("needs", "Needs.", |_| Ok((String::new(), Outputs::new())))
                .requires(&["model"]),
        )
        .unwrap();
        let mut ctx = RunContext::new("x");
        assert_eq!(
            invoke(&mut ctx, &reg, "nope", "", DecidedBy::Model),
            StepStatus::Skipped
        );
        assert_eq!(
            ctx.steps[0].error,
            "No tool named 'nope'. Choose one that is offered."
        );
        assert_eq!(
            invoke(&mut ctx, &reg, "needs", "", DecidedBy::Model),
            StepStatus::Blocked
        );
        assert_eq!(
            ctx.steps[1].error,
            "Needs model, which the run has not produced."
        );
        assert_eq!(
            invoke(&mut ctx, &reg, "boom", "", DecidedBy::Model),
            StepStatus::Failed
        );
        assert_eq!(ctx.steps[2].error, "no electrodes in file a.dat");
        assert_eq!(
            invoke(&mut ctx, &reg, "panics", "", DecidedBy::Model),
            StepStatus::Failed
        );
        assert!(ctx.steps[3].error.contains("index out of range"));
        assert_eq!(
            invoke(&mut ctx, &reg, "load", "first", DecidedBy::Policy),
            StepStatus::Ok
        );
        assert_eq!(ctx.steps[4].produced, vec!["data".to_string()]);
        assert_eq!(ctx.steps[4].summary, "Loaded 3 files.");
        assert!(ctx.has(&["data"]));
    }

    #[test]
    fn menu_lines_say_needs_and_gives() {
        assert_eq!(
            loader().offer(),
            "- load: Load. (needs: nothing; gives: data)"
        );
        let reg = Registry::new();
        assert_eq!(
            reg.menu(&RunContext::new("x")),
            "- (nothing can run against the current state)"
        );
    }

    #[test]
    fn downstream_follows_products() {
        // Seed 001, toolbox.downstream example.
        let mut reg = Registry::new();
        let noop = |_: &mut RunContext| -> ToolResult { Ok((String::new(), Outputs::new())) };
        reg.register(Tool::new("inv", "", noop).produces(&["m"]))
            .unwrap();
        reg.register(Tool::new("ev", "", noop).requires(&["m"]).produces(&["e"]))
            .unwrap();
        reg.register(Tool::new("rep", "", noop).requires(&["e"]))
            .unwrap();
        assert_eq!(
            reg.downstream(&["m".into()]),
            vec!["ev".to_string(), "rep".to_string()]
        );
    }

    #[test]
    fn the_rules_gather_what_the_tools_declare_and_never_a_role() {
        let noop = |_: &mut RunContext| -> ToolResult { Ok((String::new(), Outputs::new())) };
        let mut reg = Registry::new();
        reg.register(
            Tool::new("a", "", noop)
                .adjusts(&["smoothing", "data_file"])
                .adapts("table_file", 3, "3 columns"),
        )
        .unwrap();
        reg.register(Tool::new("b", "", noop).adjusts(&["smoothing", "threshold"]))
            .unwrap();
        let rules = reg.recovery_rules();
        assert_eq!(rules.settings, vec!["smoothing", "threshold"]);
        assert!(!rules.allows("data_file"));
        assert_eq!(rules.table("table_file").map(|t| t.columns), Some(3));
        assert!(rules.table("other_file").is_none());
    }

    #[test]
    fn a_panicking_gate_counts_as_open() {
        let t = loader().when(|_| panic!("gate bug"));
        assert!(t.available(&RunContext::new("x")));
    }
}
