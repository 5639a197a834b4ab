# The IR tests of the overflow check passes, run by LLVM's lit:
#
#   lit -Dplugin=<dir>/overflow-checks.so \
#       -Dllvm_config=/usr/lib/llvm-22/bin/llvm-config plugin/test
#
# `opt` and `FileCheck` come from the LLVM that `llvm_config` names, which must
# be the one the plugin was built against. lit's output goes next to the
# plugin, not into the source tree.

import os
import subprocess

import lit.formats

config.name = "overflow-checks"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".ll"]
config.test_source_root = os.path.dirname(__file__)

plugin = lit_config.params.get("plugin")
llvm_config = lit_config.params.get("llvm_config")
if not plugin or not llvm_config:
    lit_config.fatal(
        "run lit with -Dplugin=<path>/overflow-checks.so "
        "-Dllvm_config=<the llvm-config it was built with>"
    )
plugin = os.path.abspath(plugin)
if not os.path.isfile(plugin):
    lit_config.fatal(f"no plugin at {plugin}: build it first (see plugin/README.md)")
config.test_exec_root = os.path.join(os.path.dirname(plugin), "lit")
config.substitutions.append(("%plugin", plugin))


def llvm_config_output(flag):
    try:
        return subprocess.check_output([llvm_config, flag], text=True).strip()
    except (OSError, subprocess.CalledProcessError) as e:
        lit_config.fatal(f"`{llvm_config} {flag}` failed: {e}")


config.environment["PATH"] = os.pathsep.join(
    [llvm_config_output("--bindir"), config.environment["PATH"]]
)
# As in LLVM's own tests: `REQUIRES: x86-registered-target`.
for target in llvm_config_output("--targets-built").split():
    config.available_features.add(target.lower() + "-registered-target")
