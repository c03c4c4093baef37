"""`python -m libcst.tool codemod migrate_loss_scale.MigrateLossScaleCommand --target keras2 PATH`.

The same transform as compat-lso-migrate, behind libcst's codemod runner: the module's code goes
through `codemods.apply.engine.migrate`, manual findings and notes become the runner's warnings, and
a module that cannot be migrated is skipped unchanged.
"""

from __future__ import annotations

import argparse

import libcst as cst
from libcst.codemod import CodemodCommand, CodemodContext, SkipFile

from codemods import table
from codemods.apply.engine import MigrationError, migrate


class MigrateLossScaleCommand(CodemodCommand):
    DESCRIPTION: str = (
        "Migrate code from tf.keras.mixed_precision.experimental (the deprecated loss-scaling "
        "API); the same rules as compat-lso-migrate."
    )

    @staticmethod
    def add_args(arg_parser: argparse.ArgumentParser) -> None:
        arg_parser.add_argument(
            "--target",
            choices=table.TARGETS,
            default="shim",
            help="what to migrate to (default: shim); see compat-lso-migrate --help",
        )

    def __init__(self, context: CodemodContext, target: table.Target = "shim") -> None:
        super().__init__(context)
        self.target = target

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        code = tree.code
        try:
            result = migrate(code, self.target)
        except MigrationError as error:
            raise SkipFile(str(error)) from None
        for finding in result.findings:
            # The runner has warnings only: a note (nothing to do, but the meaning changed, as
            # LSO022 says of Keras 3's class) is one, marked as compat-lso-migrate marks it.
            if not finding.fixed or finding.note:
                marker = " [note]" if finding.note else ""
                help_line = f"\n  help: {finding.help}" if finding.help else ""
                self.warn(
                    f"{finding.line}:{finding.col}: {finding.code}{marker} {finding.message}"
                    + help_line
                )
        return tree if result.text == code else cst.parse_module(result.text)
