"""Each kind of check of the documents fails on a wrong line: the line is made
wrong in the document as the checks read it, and the check must then fail.
"""

from __future__ import annotations

import inspect
from typing import Callable, List, Tuple

import pytest

from checks.tests import documents as docs
from checks.tests import test_documents as names
from checks.tests import test_documents_numbers as numbers
from checks.tests import test_documents_samples as samples
from checks.tests import test_documents_tables as tables


WRONG_LINES: List[Tuple[str, str, str, str, Callable[..., None]]] = [
    # (kind, document, a line it holds, the line made wrong, the test that must then fail)
    ("command", "README.md", "`python -m checks --hint 3`", "`python -m checks --hints 3`",
     names.test_every_command_in_the_document_is_one_its_program_accepts),
    ("usage line", "labs/MAINTAINERS.md", "--observe \\| --guide]", "--observe \\| --guides]",
     names.test_every_command_in_the_document_is_one_its_program_accepts),
    ("autograding JSON", "labs/INSTRUCTORS.md", '"run": "MOCK=1 .venv/bin/python -m checks 1"',
     '"run": "MOCK=1 .venv/bin/python -m checks 10"',
     names.test_every_command_in_the_document_is_one_its_program_accepts),
    ("option alone", "README.md", "(`--all` for all three", "(`--every` for all three",
     names.test_every_option_the_document_names_alone_is_one_a_program_takes),
    ("environment", "labs/CLIENT.md", "(`MCP_LAB_TOOL_SHARE`;", "(`MCP_LAB_TOOLS_SHARE`;",
     names.test_every_environment_variable_the_document_names_is_read_by_the_code),
    ("path", "labs/MAINTAINERS.md", "`checks/dev/bench_server.py`", "`checks/dev/bench_servers.py`",
     names.test_every_path_the_document_names_exists),
    ("name", "labs/GUIDE.md", "`starter/discovery.py`, `list_all_tools`", "`starter/discovery.py`, `list_every_tool`",
     names.test_every_name_in_inline_code_is_in_the_code),
    ("error code", "servers/README.md", "`-32700`", "`-32799`",
     lambda source: names.test_every_error_code_the_documents_name_is_one_the_code_uses(source)),
    ("client command", "labs/CLIENT.md", "complete notes/summarise_tag tag pa", "complete notes/summarise tag pa",
     samples.test_every_command_of_the_client_and_the_fixtures_runs_against_them),
    ("trace sample", "labs/GUIDE.md", "client -> notes    tools/list #4", "client -> notes    tools/list #3",
     samples.test_the_guides_trace_of_item_2_is_what_the_command_prints),
    ("faults line", "labs/MAINTAINERS.md", "faults: 36 scenarios run", "faults: 35 scenarios run",
     samples.test_the_fault_suites_summary_line_is_the_one_it_prints),
    ("interop line", "labs/MAINTAINERS.md", "9/14 calls, scripts and cases answered", "6/6 calls answered",
     samples.test_the_interop_summary_line_is_the_one_it_prints),
    ("bench table", "labs/MAINTAINERS.md", "solution/SDK 2.30x", "solution/SDK 2.31x",
     samples.test_the_bench_table_is_what_the_bench_prints_for_the_documents_measurements),
    ("demo", "labs/GUIDE.md", "makes five calls in one script", "makes six calls in one script",
     samples.test_the_code_mode_demo_runs_as_documented_and_does_what_the_guide_says),
    ("agent loop", "labs/GUIDE.md", "sent to notes / read_note`", "sent to notes / read_notes`",
     samples.test_the_acceptance_criterion_for_the_agent_loop_is_what_it_prints),
    ("hostile table", "labs/MAINTAINERS.md", "| malformed progress notifications |", "| malformed progress |",
     tables.test_the_hostile_table_has_a_row_for_each_hostile_scenario_named_as_the_suite_names_it),
    ("switches table", "servers/README.md", "| `--inline` |", "| `--in-line` |",
     tables.test_the_switches_table_names_every_switch_and_every_choice_of_the_servers),
    ("switch variable", "servers/README.md", "| `--delay S` | `MCP_LAB_DELAY` |", "| `--delay S` | `MCP_LAB_WAIT` |",
     tables.test_the_switches_table_gives_each_switch_the_variable_its_help_names_and_the_server_reads_it),
    ("layout", "labs/MAINTAINERS.md", "param_headers, Mcp-Param-*", "headers, Mcp-Param-*",
     lambda: tables.test_the_layout_names_every_file_of_each_folder("solution/")),
    ("CI", "labs/MAINTAINERS.md", "three self-checks", "two self-checks", tables.test_maintainers_says_what_ci_runs),
    ("exercise table", "labs/GUIDE.md", "`starter/naming.py`, `model_tool_name` |",
     "`starter/naming.py`, `tool_name` |",
     tables.test_the_walkthroughs_exercise_table_is_the_exercises_of_the_checks),
    ("extension heading", "labs/GUIDE.md", "(E4: `starter/meta_tools.py`, `rank`)",
     "(E4: `starter/meta_tools.py`, `ranks`)",
     tables.test_each_extension_section_names_the_file_and_function_the_checks_judge),
    ("JSON fields", "README.md", "(number, id, title,", "(number, ident, title,",
     tables.test_the_readmes_json_fields_are_in_the_reports_schema),
    ("config keys", "labs/CLIENT.md", "`inheritEnv`, `protocolVersion`", "`inheritEnv`, `protocolVersions`",
     tables.test_clients_list_of_server_keys_is_the_configs),
    ("mutation record", "labs/INSTRUCTORS.md", "Last run, on 2 CPUs: ", "Last run, on 2 CPUs: 1",
     tables.test_the_recorded_mutation_run_is_of_todays_regions_catalogue_and_equivalents),
    ("number", "README.md", "four marked exercise points", "five marked exercise points",
     numbers.test_every_number_the_document_states_is_the_one_the_code_has),
    ("number in a table", "servers/README.md", "E3 uses 60 and 0.025", "E3 uses 32 and 0.025",
     numbers.test_every_number_the_document_states_is_the_one_the_code_has),
    ("statement gone", "labs/CLIENT.md", "after 5 s of silence", "after a while of silence",
     numbers.test_every_number_the_document_states_is_the_one_the_code_has),
    ("option in no document", "labs/MAINTAINERS.md", "; `--no-npm` leaves", "; leaves",
     lambda: names.test_every_option_of_the_labs_programs_is_in_a_document("checks.dev.interop")),
    ("HTTP capture", "labs/MAINTAINERS.md", "Mcp-Name: slow_count", "Mcp-Name: slow-count",
     lambda: samples.test_each_captured_request_carries_the_headers_the_client_sends(
         "current", "The 2026-07-28 era: no session")),
    ("config sample", "labs/CLIENT.md", '"args": ["../servers/notes.py"]}}}', '"args": ["servers/notes.py"]}}}',
     tables.test_every_config_in_the_documents_is_one_the_client_takes_as_it_stands),
    ("config key", "labs/CLIENT.md", '"type": "http", "url"', '"kind": "http", "url"',
     tables.test_every_config_in_the_documents_is_one_the_client_takes_as_it_stands),
    ("test extra", "README.md", "PyJWT for", "a JWT library for",
     tables.test_the_readme_names_every_package_the_test_extra_brings),
    ("CI options", "labs/MAINTAINERS.md", "`checks.dev.conformance --client-only --ours-only`",
     "`checks.dev.conformance --client-only`", tables.test_maintainers_says_what_ci_runs),
    ("switch choices", "servers/README.md", "| `--auth [ask\\|auto]` |", "| `--auth [ask]` |",
     tables.test_the_switches_table_names_every_switch_and_every_choice_of_the_servers),
    ("layout of solution/", "labs/MAINTAINERS.md", "bill, usage kept whole", "bills, usage kept whole",
     lambda: tables.test_the_layout_names_every_file_of_each_folder("solution/")),
    ("oauth keys", "labs/CLIENT.md", '{"redirectPort": ...}', '{"redirect_port": ...}',
     tables.test_clients_list_of_server_keys_is_the_configs),
    ("bill sample", "labs/CLIENT.md", "billed as 22,295 plain", "billed as 22,296 plain",
     samples.test_the_bill_line_in_client_is_what_ask_prints_for_its_tokens),
    ("cost figures", "labs/CLIENT.md", "still reads 0.97 of", "still reads 0.98 of",
     samples.test_the_cost_figures_the_documents_quote_are_the_ones_rows_8_and_9_count),
]


@pytest.mark.parametrize("kind, doc, right, wrong, check", WRONG_LINES, ids=[w[0] for w in WRONG_LINES])
def test_each_kind_of_check_fails_on_a_wrong_line(kind: str, doc: str, right: str, wrong: str,
                                                 check: Callable[..., None], monkeypatch: pytest.MonkeyPatch,
                                                 request: pytest.FixtureRequest) -> None:
    original = docs.text
    assert right in original(doc), f"{doc} no longer holds {right!r}: pick another line to make wrong"
    wanted = inspect.signature(check).parameters
    # the fixtures first, from the documents as they are (the runs are shared by the whole session)
    arguments = {name: doc if name == "doc" else request.getfixturevalue(name) for name in wanted}
    monkeypatch.setattr(docs, "text", lambda name: original(name).replace(right, wrong, 1) if name == doc
                        else original(name))
    with pytest.raises(AssertionError):
        check(**arguments)
