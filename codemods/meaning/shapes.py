"""Small questions about syntax that the name walk (codemods/meaning/names.py) asks."""

from __future__ import annotations

import ast


def defaults(args: ast.arguments) -> list[ast.expr]:
    return [*args.defaults, *(d for d in args.kw_defaults if d is not None)]


def annotations_of(args: ast.arguments) -> list[ast.expr | None]:
    every = (*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs, args.kwarg)
    return [arg.annotation for arg in every if arg is not None]


def is_dotted(node: ast.expr) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)
