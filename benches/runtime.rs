//! The controller loop's own overhead: 30 registered no-op tools in a dependency chain, run
//! to the end with the route projected after every step (as the studio needs it). Divide the
//! time per run by 30 for the time per step. Target: under 1 ms per step.

use hydrogeo_studio::runtime::{
    JsonProduct, Outputs, Registry, RunContext, RunOptions, Tool, drive,
};

fn chain(n: usize) -> Registry {
    let mut reg = Registry::new();
    for i in 0..n {
        let out = if i + 1 == n {
            "report_files".to_string()
        } else {
            format!("p{i}")
        };
        let out2 = out.clone();
        let mut t = Tool::new(&format!("t{i}"), "A no-op step.", move |_| {
            Ok((
                "nothing".into(),
                Outputs::new().with(&out2, JsonProduct::new("x", serde_json::Value::Null)),
            ))
        })
        .produces(&[out.as_str()]);
        if i > 0 {
            let req = format!("p{}", i - 1);
            t = t.requires(&[req.as_str()]);
        }
        reg.register(t).unwrap();
    }
    reg
}

#[divan::bench]
fn thirty_noop_steps_with_route_projection(bencher: divan::Bencher) {
    let reg = chain(30);
    let opts = RunOptions {
        max_steps: 40,
        ..Default::default()
    };
    bencher.bench_local(|| {
        let mut ctx = RunContext::new("benchmark");
        drive(&mut ctx, &reg, None, &opts);
        assert_eq!(ctx.steps.len(), 30);
    });
}

fn main() {
    divan::main();
}
