//! The modules of a build, which of them were built from Rust, the order to load them in, and
//! which driver each Rust object belongs to.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use anyhow::{Context, Result};
use thiserror::Error;

use crate::measure;

/// A loadable module of a build, from kbuild's `modules.order`, `<module>.mod` and modpost's
/// `<module>.mod.c`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Module {
    /// The file name without `.ko`, e.g. `nova-core`.
    pub file: String,
    /// The objects linked into it, relative to the build directory.
    pub members: Vec<String>,
    /// The modules it needs (`MODULE_INFO(depends, ...)`), by module name.
    pub depends: Vec<String>,
    /// Whether rustc compiled at least one of its members.
    pub rust: bool,
}

impl Module {
    /// The module's name as the kernel knows it (`-` becomes `_`).
    pub fn name(&self) -> String {
        module_name(&self.file)
    }
}

pub fn module_name(file: &str) -> String {
    file.replace('-', "_")
}

/// The `depends` of a modpost-generated `.mod.c`.
pub fn parse_depends(mod_c: &str) -> Vec<String> {
    mod_c
        .lines()
        .find_map(|l| l.trim().strip_prefix("MODULE_INFO(depends, \""))
        .and_then(|rest| rest.split('"').next())
        .map(|list| {
            list.split(',')
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The modules of the build directory `out`, in `modules.order`'s order.
pub fn read_modules(out: &Path) -> Result<Vec<Module>> {
    let order_path = out.join("modules.order");
    let order = fs::read_to_string(&order_path)
        .with_context(|| format!("reading {}", order_path.display()))?;
    let mut modules = Vec::new();
    for path in order.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let stem = path.strip_suffix(".o").unwrap_or(path);
        // kbuild's `<module>.mod` lists the module's objects.
        let mod_file = out.join(format!("{stem}.mod"));
        let members: Vec<String> = fs::read_to_string(&mod_file)
            .with_context(|| format!("reading {}", mod_file.display()))?
            .split_whitespace()
            .map(str::to_string)
            .collect();
        let depends = parse_depends(
            &fs::read_to_string(out.join(format!("{stem}.mod.c"))).unwrap_or_default(),
        );
        let rust = members.iter().any(|m| {
            let (dir, name) = m.rsplit_once('/').unwrap_or(("", m));
            let cmd = out.join(dir).join(format!(".{name}.cmd"));
            fs::read_to_string(cmd).is_ok_and(|cmd| measure::compiled_by_rustc(&cmd))
        });
        modules.push(Module {
            file: Path::new(stem)
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned(),
            members,
            depends,
            rust,
        });
    }
    Ok(modules)
}

/// Which modules the guest loads, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadPlan {
    /// Modules not built from Rust that a Rust module needs, dependencies first.
    pub dependencies: Vec<String>,
    /// The modules built from Rust, each after the modules it needs.
    pub rust: Vec<String>,
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum PlanError {
    #[error(
        "module {module} depends on {missing}, which is not a module of this build (is it \
         built in? then modpost would not list it)"
    )]
    MissingDependency { module: String, missing: String },
    #[error("modules depend on each other in a cycle: {0}")]
    Cycle(String),
}

/// The modules built from Rust, in `modules` order but after their dependencies, and the
/// modules that are not Rust but that those need. Module files are named without `.ko`.
pub fn load_plan(modules: &[Module]) -> Result<LoadPlan, PlanError> {
    let by_name: BTreeMap<String, &Module> = modules.iter().map(|m| (m.name(), m)).collect();
    let mut done = BTreeSet::new();
    let mut plan = LoadPlan::default();

    fn visit<'a>(
        m: &'a Module,
        by_name: &BTreeMap<String, &'a Module>,
        done: &mut BTreeSet<String>,
        stack: &mut Vec<String>,
        plan: &mut LoadPlan,
    ) -> Result<(), PlanError> {
        let name = m.name();
        if done.contains(&name) {
            return Ok(());
        }
        if stack.contains(&name) {
            stack.push(name);
            return Err(PlanError::Cycle(stack.join(" -> ")));
        }
        stack.push(name.clone());
        for dep in &m.depends {
            let dep_module =
                by_name
                    .get(&module_name(dep))
                    .ok_or_else(|| PlanError::MissingDependency {
                        module: m.file.clone(),
                        missing: dep.clone(),
                    })?;
            visit(dep_module, by_name, done, stack, plan)?;
        }
        stack.pop();
        done.insert(name);
        if m.rust {
            plan.rust.push(m.file.clone());
        } else {
            plan.dependencies.push(m.file.clone());
        }
        Ok(())
    }

    for m in modules.iter().filter(|m| m.rust) {
        visit(m, &by_name, &mut done, &mut Vec::new(), &mut plan)?;
    }
    Ok(plan)
}

/// What a Rust object is part of.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Owner {
    /// A loadable module, by file name.
    Module(String),
    /// Built into the kernel image (a built-in driver, or Rust in a C subsystem).
    BuiltIn,
    /// The `rust/` directory: `core`, `kernel`, `pin_init`, the bindings and helpers.
    RustDir,
}

/// Who owns the object `object` (relative to the build directory).
pub fn owner(object: &str, modules: &[Module]) -> Owner {
    if object.starts_with("rust/") {
        return Owner::RustDir;
    }
    modules
        .iter()
        .find(|m| m.members.iter().any(|o| o == object))
        .map_or(Owner::BuiltIn, |m| Owner::Module(m.file.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(file: &str, rust: bool, depends: &[&str]) -> Module {
        Module {
            file: file.into(),
            members: vec![format!("d/{file}.o")],
            depends: depends.iter().map(|s| s.to_string()).collect(),
            rust,
        }
    }

    #[test]
    fn mod_c_depends() {
        let mod_c = "#include <linux/module.h>\n\nMODULE_INFO(depends, \"nova_core,i2c-stub\");\n\
                     MODULE_INFO(srcversion, \"ABC\");\n";
        assert_eq!(parse_depends(mod_c), ["nova_core", "i2c-stub"]);
        assert!(parse_depends("MODULE_INFO(depends, \"\");\n").is_empty());
        assert!(parse_depends("").is_empty());
    }

    #[test]
    fn only_rust_modules_and_what_they_need() {
        let modules = [
            module("i2c-stub", false, &[]),
            module("nova-drm", true, &["nova_core"]),
            module("helper", false, &[]),
            module("nova-core", true, &["helper"]),
            module("rust_minimal", true, &[]),
        ];
        assert_eq!(
            load_plan(&modules),
            Ok(LoadPlan {
                dependencies: vec!["helper".into()],
                rust: vec!["nova-core".into(), "nova-drm".into(), "rust_minimal".into()],
            })
        );
    }

    #[test]
    fn missing_dependencies_and_cycles_are_errors() {
        let modules = [module("a", true, &["gone"])];
        assert_eq!(
            load_plan(&modules),
            Err(PlanError::MissingDependency {
                module: "a".into(),
                missing: "gone".into()
            })
        );
        let modules = [module("a", true, &["b"]), module("b", true, &["a"])];
        assert_eq!(
            load_plan(&modules),
            Err(PlanError::Cycle("a -> b -> a".into()))
        );
    }

    #[test]
    fn objects_belong_to_modules_builtins_or_rust() {
        let mut rnull = module("rnull_mod", true, &[]);
        rnull.members = vec!["drivers/block/rnull/rnull.o".into()];
        let modules = [rnull];
        assert_eq!(
            owner("drivers/block/rnull/rnull.o", &modules),
            Owner::Module("rnull_mod".into())
        );
        assert_eq!(
            owner("drivers/android/binder/rust_binder_main.o", &modules),
            Owner::BuiltIn
        );
        assert_eq!(owner("rust/kernel.o", &modules), Owner::RustDir);
    }
}
