"""No module of the client imports, directly or through others, a module that imports it.

Imports inside functions and under ``TYPE_CHECKING`` count too: a circle that only closes at
run time still ties the two modules into one.
"""

from __future__ import annotations

import grimp


def test_no_module_of_the_client_is_in_an_import_circle() -> None:
    graph = grimp.build_graph("client")
    circles = sorted(
        (module, imported)
        for module in graph.modules
        for imported in graph.find_modules_directly_imported_by(module)
        if graph.chain_exists(importer=imported, imported=module)
    )
    assert circles == []
