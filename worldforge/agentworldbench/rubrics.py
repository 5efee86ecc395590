"""The judge's rubrics, one per benchmark domain, and the loader of the reference's prompt files.

AgentWorldBench's reference evaluation keeps two prompt files per domain::

    prompts/<domain>/system_prompt.txt         the world model's system prompt (a record's ``system_str``)
    prompts/<domain>/judge_system_prompt.txt   the judge's system prompt: how to grade a prediction

The world model's system prompts are part of its next-state contract and live in
:mod:`worldforge.worldmodel.prompts`. This module holds the judge's side (worldforge's own texts,
not copied from the reference):

* :data:`JUDGE_RUBRICS` — per domain: how a judge compares a predicted observation with the real
  one (the ground truth), which content must match exactly and which a simulation may choose
  freely, and what earns 5, 3 and 1 on each of the five dimensions
  (:data:`~worldforge.worldmodel.prompts.DIMENSIONS`) in that domain. A rubric asks for no output
  format: the judge's user message does that. :func:`judge_rubric` maps a domain through
  :func:`~worldforge.worldmodel.prompts.benchmark_domain`, with a generic text for a domain the
  benchmark does not have.

:func:`load_prompts` reads a user's checkout of the reference's prompt files instead (either
the ``prompts`` folder itself or a checkout root holding it): each file present replaces
worldforge's text for its domain and kind, byte for byte, and the :class:`PromptSet` it
returns says where every text came from and its SHA-256, so a report can state which prompts
an evaluation used.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from worldforge.errors import WorldforgeError
from worldforge.worldmodel.prompts import BENCHMARK_DOMAINS, DIMENSIONS, SYSTEM_PROMPTS, benchmark_domain, system_prompt

_JUDGE_GENERAL = """\
## Rules that hold in every domain

- Judge the predicted observation only. Reasoning the world model wrote before it earns nothing and costs nothing.
- Length is no merit. Invented padding lowers quality and usually factuality; cutting essential content lowers quality.
- When the real observation is empty, an empty prediction is exactly right on every dimension, and invented output is an error \
of factuality and realism however plausible it looks. When the real observation is not empty, an empty prediction scores 1 on \
factuality and quality.
- One mistake may cost points on several dimensions only where it really touches each of them; a wrong value that is allowed to \
differ (see the content classes) costs nothing.
- If the real observation itself contradicts the history (a flaky or perturbed environment), judge factuality against the real \
observation and consistency against the history."""


def _rubric(title: str, subject: str, classes: list[tuple[str, str]], dims: dict[str, tuple[str, str, str, str]], checks: list[str]) -> str:
    assert tuple(dims) == DIMENSIONS
    parts = [
        f"# {title}",
        f"You evaluate {subject}. For one turn of an agent's episode you are shown the earlier actions with their real "
        "observations, the current action, the observation the world model predicted for it, and the observation the real "
        "environment returned. The real observation is the ground truth. Judge the prediction against it and against the history, "
        "and tie every strength or weakness you name to a concrete match or difference between the two.",
        "## What a simulation can know\n\n"
        "The world model never sees the real environment: it knows what the history shows, what the action implies and how such "
        "systems generally behave. Sort the content of the observation into these classes and hold each to its own standard:\n\n"
        + "\n".join(f"- **{name}** — {text}" for name, text in classes),
        "## The five dimensions\n\n"
        "Score each dimension as an integer from 1 to 5, on its own evidence: a well-formed prediction can be wrong, and a correct "
        "one can be badly laid out. The descriptions give 5, 3 and 1; 4 and 2 lie between them.",
    ]
    for name, (covers, five, three, one) in dims.items():
        parts.append(f"### {name}\n\n{covers}\n\n- 5: {five}\n- 3: {three}\n- 1: {one}")
    parts.append("## Checks for this domain\n\n" + "\n".join(f"- {c}" for c in checks))
    parts.append(_JUDGE_GENERAL)
    return "\n\n".join(parts)


_TERMINAL_RUBRIC = _rubric(
    "Judging a terminal world model",
    "a terminal world model: a model that predicts what a Linux shell session shows after the agent's command or keystrokes",
    [("Determined output", "follows from the command and what the session has shown; must match exactly. `echo` and `printf`, "
      "arithmetic, `cat` of a file written earlier in the session, `pwd` after a known `cd`, error messages of a failed command, "
      "whether a command succeeds at all."),
     ("Pre-existing state", "files, directories, packages and configuration that existed before the session and that the history "
      "has not shown; judge plausibility and internal coherence, not equality. A different but sensible `ls` of an unseen "
      "directory or version number is acceptable."),
     ("Runtime values", "timestamps, PIDs, durations, download speeds, container hostnames not yet shown, memory addresses; only "
      "their format and plausibility count."),
     ("Structure", "the prompt string, whether the command is echoed, line breaks and blank lines, column alignment, where the "
      "output stops (a fresh prompt, or mid-run); must match the real terminal.")],
    {"format": ("The terminal layout only, not the content: prompt pattern (user, host, path, `$` or `#`), command echo, line "
                "breaks, spacing and alignment of tabular output, and the boundary where the capture ends.",
                "the layout is indistinguishable from the real screen: same prompt and echo convention, same line structure, same "
                "ending.",
                "recognisably a terminal capture of the right kind, but with a wrong prompt or path in it, a missing or extra echo, "
                "misplaced blank lines, or a missing final prompt.",
                "not terminal output at all — prose, a description of what would happen, a JSON wrapper — or the wrong harness "
                "form altogether."),
     "factuality": ("Whether the content is right where it can be known: command semantics and options, exact determined output, "
                    "success versus failure, error messages word for word, exit behaviour.",
                    "every determined line matches; success or failure matches; errors have the real program's exact wording.",
                    "the command's outcome is right (it succeeds or fails as in reality) but determined details differ: a wrong "
                    "count, a paraphrased error, a missing line of known file content.",
                    "the outcome is wrong — success reported for a failing command or the reverse, output of a different "
                    "command, invented file contents that contradict the truth — or the prediction is empty while the real one "
                    "is not."),
     "consistency": ("Agreement with the session's state: working directory, environment variables, files created, changed or "
                     "deleted earlier, installed packages, background jobs, an interactive program still running.",
                     "every reference to earlier state is right: the prompt shows the current directory, earlier files exist "
                     "with their contents, removed ones are gone.",
                     "mostly coherent, with one slip such as a stale directory in the prompt or an edit forgotten.",
                     "contradicts the session: a deleted file is read, the wrong directory is listed, a program still running is "
                     "ignored."),
     "realism": ("Whether it behaves like a real system: silent commands stay silent, verbose ones show their real progress stages, "
                 "errors look like real errors, values are plausible.",
                 "a reader could not tell it from real output: right verbosity, real progress style, plausible sizes, versions, "
                 "permissions and times.",
                 "believable in outline but off in texture: too tidy or too chatty, an implausible version or size, progress "
                 "output of the wrong tool.",
                 "impossible behaviour: output for a command that prints nothing, a finished long build after a 0.1 s wait, "
                 "fabricated tools or flags."),
     "quality": ("Completeness and proportion against the real observation: all essential lines present, nothing padded.",
                 "complete and proportionate: every line an agent needs is there, and the length matches the real output.",
                 "the gist is there but important lines are missing (the failing test name, the last error line) or much "
                 "invented filler surrounds them.",
                 "the essential content is missing or buried: truncated where it matters, or dwarfed by invented output.")},
    ["Silent commands: `cd`, `export`, `mkdir -p`, `touch`, `cp`, `git add` and redirections print nothing; check that the "
     "prediction does not invent output for them.",
     "Errors: compare the program name prefix, the quoted path and the message text; a correct error in the wrong words is a "
     "factuality defect.",
     "Exit behaviour: `&&` and `||` chains must stop or continue as the real statuses dictate; an exit-code trailer must agree "
     "with the output.",
     "Timing: with a short duration the real capture may end mid-run without a prompt; a prediction that finishes the job early "
     "is unrealistic.",
     "Interactive programs: keystrokes sent to a REPL, pager or editor must not be treated as shell commands."],
)

_SWE_RUBRIC = _rubric(
    "Judging a software-engineering world model",
    "a software-engineering world model: a model that predicts what the tools of a coding agent's sandbox (file viewer, editor, "
    "search helpers, shell, test runner) return in a code repository",
    [("Determined content", "follows from the call and what the session has shown; must match exactly. Lines of a file already "
      "displayed, the result of an edit, whether an edit applies, line numbers after an edit, output of a script whose code is "
      "known, pass or fail of a test whose outcome the code decides."),
     ("Unseen repository content", "code, files and directory contents the history has not shown; judge plausibility for the "
      "project and coherence with what was shown, not equality."),
     ("Runtime values", "test durations, timestamps, memory addresses, temporary paths, random seeds; only format and plausibility "
      "count."),
     ("Structure", "the harness's framing: viewer headers, `(N more lines above)`-style notes, line-number layout, edit "
      "confirmations, the test runner's report layout; must match.")],
    {"format": ("The framing of the tool's reply only: headers, line-numbering style, confirmation wording, test-report sections "
                "and summary line, whitespace and indentation of code.",
                "framed exactly as the harness frames it, with code indentation preserved.",
                "the right kind of reply with framing errors: a missing header or line-count note, numbers in another style, a "
                "summary line in the wrong form.",
                "no recognisable harness output: prose, a diff instead of a view, raw text where a framed view is due."),
     "factuality": ("Correctness of what can be known: displayed code, edit results, error messages, search hits in known files, "
                    "the outcome of running code and tests.",
                    "known code and line numbers exact; the edit applies or fails as in reality; tests pass and fail exactly as "
                    "in reality, with the real error.",
                    "the main outcome is right (the edit applied, the test failed) but details are off: wrong line numbers, a "
                    "different assertion message, a miscounted tally.",
                    "the outcome is wrong: an edit reported applied that fails, a failing test shown passing or the reverse, "
                    "code that contradicts what was displayed, or an empty reply where the real one is not."),
     "consistency": ("Agreement with the session: files as edited so far, created scripts, earlier views of the same file, the "
                     "working directory, installed packages.",
                     "every file reflects all earlier edits, and repeated views agree with each other.",
                     "mostly coherent, with a stale line or a line-number shift not carried forward.",
                     "contradicts the session: an earlier edit is lost, a created file is missing, a view disagrees with one "
                     "shown before."),
     "realism": ("Whether the reply behaves like the real harness and tools: plausible code for this project, faithful test-runner "
                 "and interpreter behaviour, real error styles.",
                 "indistinguishable from a real session: idiomatic project code, genuine tracebacks with sensible frames, a "
                 "believable test report.",
                 "believable overall, with generic or unidiomatic code, an implausible traceback frame, or a report that is "
                 "too clean.",
                 "impossible behaviour: tests that cannot exist, tracebacks into nonexistent files, output no such tool prints."),
     "quality": ("Completeness and proportion: the whole window, the whole test report, every match, and nothing invented beyond "
                 "them.",
                 "complete and proportionate to the real reply.",
                 "useful but incomplete — a truncated window, failure sections without their tracebacks — or padded with "
                 "invented material.",
                 "the decisive content is missing: no failure details, a view of the wrong region, or mostly filler.")},
    ["Edits: an old text that occurs nowhere or more than once makes a replacement fail in reality; check the prediction agrees.",
     "Line numbers: after an insertion or deletion every later line number shifts; check windows and tracebacks use the new "
     "numbering.",
     "Tests: the pass/fail status of each test named in the real report is determined content; a tally that disagrees is a "
     "factuality defect.",
     "Tracebacks: the exception type and message are determined when the code is known; frame paths must exist in the repository.",
     "Search helpers: the match count and the files listed must agree with the code known so far."],
)

_SEARCH_RUBRIC = _rubric(
    "Judging a search world model",
    "a search world model: a model that predicts what a research agent's web tools return — `web_search` result lists, "
    "`web_extractor` pages as Markdown and `dict_memory` replies",
    [("Facts about the world", "claims in titles, snippets and page text: where the real observation states them, they must "
      "agree with it; where it does not, they must not contradict the history, well-established real-world knowledge or, for a "
      "fictional world, the facts the context gives. Fabricated or contradicted facts are serious errors."),
     ("Free values", "exactly which URLs rank where beyond the decisive ones, publication dates of pages not shown, the wording "
      "of snippets for the same fact, page boilerplate; judge plausibility, not equality."),
     ("Memory replies", "determined by the operations so far: retrieved values, confirmations and not-found replies must match "
      "exactly."),
     ("Structure", "`[n] <url>` / `Title:` / `Snippet:` / `Date:` blocks separated by blank lines, the number of results, per-query "
      "sections for a batch, Markdown pages, one-line memory replies; must match.")],
    {"format": ("The tool's layout: result blocks with their four fields and numbering, batch sections, Markdown headings, lists "
                "and tables for pages, the memory reply's form.",
                "every block has the exact field layout and numbering of the real list; pages are clean Markdown like the real "
                "one; memory replies have the real form.",
                "the right tool format with flaws: a field missing from some blocks, numbering restarted or wrong, a page "
                "without structure, batch sections merged.",
                "not the tool's output: prose answering the question, JSON where blocks are due, a summary instead of a page."),
     "factuality": ("Whether the content agrees with the real observation and with the world: the facts in snippets and pages, the "
                    "sources named, memory contents.",
                    "every fact that the real observation states is stated the same way, nothing contradicts the world, nothing "
                    "is invented; memory replies are exact.",
                    "the main facts agree, but some secondary figures, names or dates are wrong or made up.",
                    "key facts are wrong or fabricated (a different price, year or person than the world has), memory returns "
                    "what was never stored, or the reply is empty where the real one is not."),
     "consistency": ("Agreement with the session: a page's text against the snippet its URL showed, repeated queries and "
                     "extractions against earlier ones, memory against what was stored and removed, URL numbering.",
                     "fully coherent with everything shown earlier.",
                     "broadly coherent with one conflict, such as a page that disagrees with its own earlier snippet on a detail.",
                     "contradicts the session: a fact changes between turns, a known URL shows a different page, memory forgets "
                     "or invents items."),
     "realism": ("Whether it behaves like a real search engine and real pages: relevance to the query, ranking, source diversity, "
                 "plausible URLs and dates, page length and shape for its type.",
                 "reads like a real engine's list: relevant, well ranked, varied sources, plausible URLs; pages read like the "
                 "sites they come from.",
                 "plausible but off: every result a perfect hit, one source repeated, generic URLs, pages that read like answers "
                 "written for the agent.",
                 "clearly artificial: irrelevant results, impossible URLs, snippets addressed to the agent."),
     "quality": ("Completeness and proportion: the real number of results, the information the real results carry (especially "
                 "the top ones), page content of the real depth, no padding.",
                 "as complete as the real reply and no longer than it needs to be.",
                 "partly complete: too few results, or a page that covers only part of the real content, or heavy padding.",
                 "the information an agent needs is missing: a handful of results where ten are due, an empty or truncated page.")},
    ["Count the results per query and compare with the real list.",
     "Compare the top-ranked results first: the URLs, titles and facts an agent would act on.",
     "For a page, check that its facts agree with the real page and with the snippet its URL showed earlier.",
     "For a fictional world, facts outside what the context gives must not be asserted as if known.",
     "Memory: `retrieve` must return exactly what was stored; confirmations name the right keys."],
)

_MCP_RUBRIC = _rubric(
    "Judging a tool-server world model",
    "a tool-server world model: a model that predicts the result an MCP server or function-calling API returns for the agent's "
    "tool call",
    [("Determined results", "must match exactly: success versus error, the error's kind and message, records and fields the "
      "session has shown, values the call computes (totals, refunds, counts, converted dates), public facts such as names and "
      "codes."),
     ("Measured or live values", "prices, counts, measurements and statistics the session has not fixed; a modest relative "
      "difference (up to about a fifth of the value) is acceptable where the value is plausibly live."),
     ("Generated values", "new ids, UUIDs, tokens, timestamps, file paths, random draws; only format (matching the service's "
      "conventions) and plausibility count."),
     ("Structure", "the envelope (raw JSON, plain text, MCP content items, `isError`), key names, nesting, value types, array "
      "shapes, the form of an empty result; must match.")],
    {"format": ("The result's shape only: data type (JSON, text, CSV, number), wrapper, key names and order, nesting, indentation.",
                "the same shape as the real result: same wrapper, same keys, same nesting and types.",
                "the right data type with schema drift: renamed or missing keys, an extra wrapper, a list where an object is due.",
                "an unusable or foreign shape: prose, invalid JSON, a made-up envelope."),
     "factuality": ("Whether the call was executed correctly: the right records, the right computed values, success or error as in "
                    "reality, exact identifiers and messages.",
                    "status, identifiers, determined values and messages all match.",
                    "the status is right but some determined values are wrong or invented (a wrong total, a field that does not "
                    "exist in the real record).",
                    "the status is wrong — success where the real call failed or the reverse — or the data is largely invented, or "
                    "the reply is empty where the real one is not."),
     "consistency": ("Agreement with the session: ids and records created or read earlier, changes made by earlier writes, "
                     "counters and pagination offsets.",
                     "every reference to earlier state is exact.",
                     "mostly coherent, with one stale field or mismatched id.",
                     "contradicts the session: a record changed earlier shows old values, a deleted one is found, an id from "
                     "earlier is replaced by a new one."),
     "realism": ("Whether it behaves like the real service: its response pattern (success, empty, partial, error), its error "
                 "style, its value ranges and edge-case handling.",
                 "the same pattern as the real result, with values in realistic ranges and errors in the service's style.",
                 "plausible but generic: a success where the real service returns an empty result, an error in a generic style.",
                 "behaviour the service cannot show: an impossible state, a fabricated capability, a refusal instead of a result."),
     "quality": ("Completeness and proportion against the real result: every field present, nothing invented beyond it.",
                 "complete and no larger than the real result.",
                 "noticeably incomplete (fields or items missing) or padded with invented fields.",
                 "most of the content is missing or invented.")},
    ["Check success versus error first; getting it wrong caps factuality at 2.",
     "Compare the key set and nesting of JSON results with the real one before judging values.",
     "Validation errors must name the right argument and problem; business-rule errors the right rule.",
     "Computed numbers (totals, balances, refunds, counts) are determined content.",
     "Generated ids and timestamps may differ from the real ones but must match the service's formats."],
)

_ANDROID_RUBRIC = _rubric(
    "Judging an Android world model",
    "an Android world model: a model that predicts the phone's next screen state — its UI elements — after the agent's action",
    [("The action's effect", "the element the action targets and what happens to it: the new screen after a navigating tap, the "
      "text in the field after typing, the toggled switch, the dialog that opens or closes, the list after scrolling; must match."),
     ("Visible anchors", "foreground app and screen title, element texts and content descriptions, checked, selected, focused and "
      "enabled flags, keyboard and dialog presence; must match the real screen."),
     ("Free values", "the status bar clock, battery level, notification icons, exact times in freshly created items; only "
      "plausibility counts."),
     ("Structure", "the element schema (indices, class names, resource ids, bounds notation, field order) and the element order; "
      "must match. Bounds of elements that did not move must be identical.")],
    {"format": ("Whether the state uses the trajectory's representation: element fields, notation, order and level of detail. "
                "Content errors do not count here.",
                "the same schema, fields, notation and level of detail as the real screen.",
                "the schema is recognisable but drifts: fields renamed or dropped, bounds in another notation, elements merged.",
                "not a screen state: prose, a description of the screen, or a different schema altogether."),
     "factuality": ("Whether the elements of the real screen are predicted: the right screen, the right texts, states and bounds, "
                    "above all in the region the action changed.",
                    "the action's effect and nearly every visible anchor match the real screen.",
                    "the right screen with important elements wrong, missing or invented in the changed region.",
                    "the wrong screen or app, a stale copy of the previous screen where the real one changed, or an empty "
                    "prediction."),
     "consistency": ("Causal continuity from the previous screen and the action: the right change, or correctly none; unchanged "
                     "elements preserved; earlier data still present.",
                     "changes exactly what the action changes and preserves everything else.",
                     "the right kind of change with stale or lost parts, such as typed text that disappears or a selection reset.",
                     "the wrong change-or-no-change decision, an invented navigation, or a screen that ignores earlier actions."),
     "realism": ("Whether the transition is something the app and Android would really do: keyboard behaviour, back navigation, "
                 "dialogs, scrolling, disabled controls. Cap this at 3 when factuality or consistency is 2 or lower.",
                 "a transition the real app would make, with believable details.",
                 "plausible in outline with unlikely details, such as a keyboard that never appears or a list that scrolls too far.",
                 "impossible states: overlapping screens, controls that cannot exist in the app, a toast that never leaves."),
     "quality": ("Whether the prediction could replace the real screen for the agent's next step: complete, with the changed "
                 "region in full.",
                 "complete; an agent would take the same next action as with the real screen.",
                 "usable only at the level of which screen it is: the elements the agent would act on next are missing or wrong.",
                 "unusable: truncated, mostly missing, or misleading about what can be tapped.")},
    ["Decide first whether the real screen changed; a prediction that copies the old screen after a real change is stale and "
     "scores low on factuality and quality, however many static elements match.",
     "For a no-op (a tap on a disabled or non-interactive element), the unchanged screen reproduced exactly is right, and an "
     "invented transition is a serious error.",
     "Compare the anchors of the changed region first: typed text, the selected or checked element, dialog and keyboard presence, "
     "the first visible list items after a scroll, the screen title.",
     "Matching static parts (status bar, navigation bar, unchanged containers) earns little on its own.",
     "Element ids and bounds of untouched elements should be identical to the previous screen's."],
)

_WEB_RUBRIC = _rubric(
    "Judging a web-browser world model",
    "a web-browser world model: a model that predicts the browser's page state — usually an accessibility tree with element ids — "
    "after the agent's browser action",
    [("The action's effect", "what the action does to the page: the new page after a link, a submission or `goto`; the value in a "
      "filled field; an expanded menu; a selected option; must match."),
     ("Site data and anchors", "URL, tab titles, headings, the names, values and states of elements, listed items and their "
      "counts, prices, totals, messages; must match where the real page shows them."),
     ("Free values", "element ids of newly created elements, timestamps of new posts, ad or recommendation slots, session tokens in "
      "URLs; only pattern and plausibility count."),
     ("Structure", "the representation: tree layout, indentation, `[id]` notation, roles, property syntax, the tab, URL and title "
      "lines; must match.")],
    {"format": ("Whether the page state uses the trajectory's representation: tree layout, id notation, roles and properties. "
                "Content errors do not count here.",
                "the same representation and level of detail as the real page state.",
                "recognisable with drift: missing properties, a flattened tree, wrong id notation in places.",
                "not a page state: prose, raw HTML where a tree is due, a summary."),
     "factuality": ("Whether the predicted page is the real one: URL and title, headings, element names and values, and the site's "
                    "data in the region the action affected.",
                    "the action's effect and nearly every visible anchor match, including listed items and values.",
                    "the right page with important content wrong: search results that differ, a wrong value in the edited field, "
                    "an invented message.",
                    "the wrong page or site, a stale copy where the real page changed, or an empty prediction."),
     "consistency": ("Continuity with earlier pages and actions: untouched elements and ids preserved, earlier edits reflected, "
                     "navigation history respected.",
                     "changes exactly what the action changes; everything else, ids included, stays as it was.",
                     "the right change with stale or reset parts, such as a form value lost or ids renumbered.",
                     "ignores the session: wrong change-or-no-change decision, earlier edits missing, back leading elsewhere."),
     "realism": ("Whether the page behaves like the real site and browser: navigation, form validation, menus, the site's chrome "
                 "and content style. Cap this at 3 when factuality or consistency is 2 or lower.",
                 "exactly what the site would render.",
                 "plausible with off-site details: generic chrome, unlikely validation, content in the wrong style.",
                 "impossible pages: elements the site does not have, a page the action could not reach."),
     "quality": ("Whether the page state could replace the real one for the agent's next step: complete, with the changed region "
                 "in full.",
                 "complete; the agent would choose the same next action as with the real page.",
                 "usable at the level of which page it is, but the elements needed next are missing or wrong.",
                 "unusable: truncated, mostly missing or misleading.")},
    ["Check the URL and page title first: they show whether the navigation outcome is right.",
     "For local actions (fill, hover, select), only the affected elements should change; a reloaded or renumbered page is wrong.",
     "Compare listed data — search results, table rows, counts, totals — with the real page; they are the site's data, not free "
     "values.",
     "A no-op (missing or disabled target) must leave the page unchanged.",
     "Matching static chrome (header, navigation, footer) earns little on its own."],
)

_OS_RUBRIC = _rubric(
    "Judging a desktop operating-system world model",
    "a desktop operating-system world model: a model that predicts the computer's next state — an accessibility tree of its "
    "windows and widgets, or the printed output of a command or script — after the agent's action",
    [("The action's effect", "what the code or command does: the window it opens or closes, the text it types and where, the "
      "file it saves or moves, the cell it edits, the dialog it raises, what it prints; must match."),
     ("Visible anchors", "active application and window title, focused widget, document text, cell values, file names in views "
      "and listings, menu and dialog state, terminal output rows; must match."),
     ("Free values", "clock and status text, exact coordinates of a newly opened window, timestamps of new files, process ids; "
      "only plausibility counts."),
     ("Structure", "the representation — node rows, columns such as tag, name, text, position and size, their order — or the "
      "exact layout of printed output; must match.")],
    {"format": ("Whether the state uses the trajectory's representation (or printed output its real layout). Content errors do "
                "not count here.",
                "the same node layout, columns and notation as the real state; printed output laid out exactly as real.",
                "recognisable with drift: columns missing or reordered, nodes merged, output wrapped differently.",
                "not a state or not output: prose, a description of the desktop, a different schema."),
     "factuality": ("Whether the predicted state or output is the real one, above all where the action had its effect.",
                    "the action's effect and nearly every visible anchor match; printed output matches line for line where "
                    "determined.",
                    "the right application and window with important details wrong: text typed in the wrong field, a wrong "
                    "cell value, a dialog missing.",
                    "the wrong application, window or outcome, a stale copy where the real state changed, or an empty prediction."),
     "consistency": ("Continuity with the previous state and earlier actions: change only where the action causes it; files, "
                     "documents and settings as changed earlier.",
                     "exactly the changes the action causes, everything else preserved.",
                     "the right change with stale or lost parts, such as an unsaved edit vanishing or a window reappearing.",
                     "ignores the session: wrong change-or-no-change decision, earlier files or edits missing, focus on the "
                     "wrong window."),
     "realism": ("Whether the desktop and its applications behave as they really do: focus rules, save dialogs, shortcuts, "
                 "formula results, real error messages. Cap this at 3 when factuality or consistency is 2 or lower.",
                 "what the real desktop would show.",
                 "plausible in outline with unlikely details: a save without its dialog, a shortcut doing the wrong thing.",
                 "impossible states: windows or widgets the application does not have, output no program prints."),
     "quality": ("Whether the prediction could replace the real state or output for the agent's next step: complete, with the "
                 "changed region in full.",
                 "complete; the agent would take the same next action as with the real observation.",
                 "usable only at the level of which window is open; the details the agent needs next are missing or wrong.",
                 "unusable: truncated, mostly missing or misleading.")},
    ["Decide first whether the real state changed; a stale copy of the previous state after a real change scores low on "
     "factuality and quality however many static nodes match.",
     "Check the active window and focused widget, then the text, cells, files or output the action touched.",
     "For a no-op (a click on empty space or a disabled control), the unchanged state reproduced exactly is right.",
     "Printed output of scripts and commands is determined where the code and files are known.",
     "Coordinates and sizes of untouched nodes should be identical to the previous state's."],
)

GENERIC_RUBRIC = _rubric(
    "Judging a world model",
    "a world model: a model that predicts what an environment returns for an AI agent's action",
    [("Determined content", "follows from the action and what the history has shown; must match the real observation exactly, "
      "including success versus failure and error messages."),
     ("Unseen state", "content the history has not shown; judge plausibility and coherence, not equality."),
     ("Free values", "identifiers, timestamps and other values the environment chooses arbitrarily; only format and plausibility "
      "count."),
     ("Structure", "the observation's layout, fields and order; must match.")],
    {"format": ("The observation's layout and structure only.",
                "the same layout and structure as the real observation.",
                "the right kind of output with structural drift.",
                "not the environment's output at all."),
     "factuality": ("Correctness of what can be known.",
                    "every determined element matches and nothing is fabricated.",
                    "the main outcome is right with wrong or invented details.",
                    "the outcome is wrong, the content largely invented, or the prediction empty where the real one is not."),
     "consistency": ("Agreement with what the history established.",
                     "fully coherent with the history.",
                     "one or two conflicts with the history.",
                     "contradicts the history."),
     "realism": ("Whether it behaves like the real environment.",
                 "indistinguishable from a real observation.",
                 "plausible in outline, off in detail.",
                 "impossible behaviour or values."),
     "quality": ("Completeness and proportion against the real observation.",
                 "complete and proportionate.",
                 "important parts missing, or heavily padded.",
                 "the essential content missing.")},
    ["Check success versus failure first.",
     "Check the content the action changed before the content it left alone."],
)
"""The judge's rubric for a domain the benchmark does not have."""

JUDGE_RUBRICS: dict[str, str] = {
    "terminal": _TERMINAL_RUBRIC,
    "swe": _SWE_RUBRIC,
    "search": _SEARCH_RUBRIC,
    "mcp": _MCP_RUBRIC,
    "android": _ANDROID_RUBRIC,
    "web": _WEB_RUBRIC,
    "os": _OS_RUBRIC,
}
"""The judge's system prompt (rubric) per benchmark domain, worldforge's own texts; they ask for no output format."""


def judge_rubric(domain: str) -> str:
    """The judge's rubric for ``domain`` (mapped by :func:`benchmark_domain`); :data:`GENERIC_RUBRIC` for a domain the
    benchmark does not have."""
    return JUDGE_RUBRICS.get(benchmark_domain(domain), GENERIC_RUBRIC)


# ---------------------------------------------------------------------------------------------
# The reference's prompt files
# ---------------------------------------------------------------------------------------------

WORLDFORGE = "worldforge"
"""The origin of a text that is worldforge's own (not read from a file)."""

PROMPT_FILES = {"system": "system_prompt.txt", "judge": "judge_system_prompt.txt"}
"""The file name of each kind of prompt in the reference's layout ``prompts/<domain>/<file>``."""


@dataclass(frozen=True)
class PromptSet:
    """The world-model system prompts and judge rubrics in use, and where each came from.

    Attributes:
        system: benchmark domain → the world model's system prompt.
        judge: benchmark domain → the judge's system prompt.
        origin: ``"system:<domain>"`` / ``"judge:<domain>"`` → ``"worldforge"`` or the path of the
            file the text was read from.
    """

    system: dict[str, str]
    judge: dict[str, str]
    origin: dict[str, str]

    def system_prompt(self, domain: str) -> str:
        """The system prompt in use for ``domain`` (mapped by :func:`benchmark_domain`); worldforge's default otherwise."""
        return self.system.get(benchmark_domain(domain)) or system_prompt(domain)

    def judge_prompt(self, domain: str) -> str:
        """The judge's system prompt in use for ``domain`` (mapped by :func:`benchmark_domain`); worldforge's default otherwise."""
        return self.judge.get(benchmark_domain(domain)) or judge_rubric(domain)

    def source(self, kind: str, domain: str) -> str:
        """``"worldforge"`` or the path the text of ``kind`` (``system`` or ``judge``) for ``domain`` was read from."""
        _check_kind(kind)
        return self.origin.get(f"{kind}:{benchmark_domain(domain)}", WORLDFORGE)

    def sha256(self, kind: str, domain: str) -> str:
        """The hex SHA-256 of the UTF-8 bytes of the text of ``kind`` (``system`` or ``judge``) in use for ``domain``."""
        _check_kind(kind)
        text = self.system_prompt(domain) if kind == "system" else self.judge_prompt(domain)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _check_kind(kind: str) -> None:
    if kind not in PROMPT_FILES:
        raise ValueError(f"kind must be one of {sorted(PROMPT_FILES)}, not {kind!r}")


def _defaults() -> PromptSet:
    origin = {f"{kind}:{d}": WORLDFORGE for kind in PROMPT_FILES for d in BENCHMARK_DOMAINS}
    return PromptSet(system=dict(SYSTEM_PROMPTS), judge=dict(JUDGE_RUBRICS), origin=origin)


def _prompt_files(folder: Path) -> dict[tuple[str, str], Path]:
    """``(kind, domain) → path`` of every reference prompt file that exists under ``folder``."""
    return {(kind, d): folder / d / name for kind, name in PROMPT_FILES.items() for d in BENCHMARK_DOMAINS
            if (folder / d / name).exists()}


def _read_prompt(path: Path) -> str:
    if not path.is_file():
        raise WorldforgeError(f"{path}: not a file (a prompt must be a UTF-8 text file)")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise WorldforgeError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise WorldforgeError(f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason}); save the prompt as UTF-8") from None
    if not text.strip():
        raise WorldforgeError(f"{path}: the prompt file is empty; remove it to use worldforge's text, or restore its content")
    return text


def load_prompts(folder: str | Path | None = None) -> PromptSet:
    """The prompts to evaluate with: worldforge's, with files of the reference's layout replacing them.

    Args:
        folder: ``None`` for worldforge's texts alone; else either the reference's ``prompts``
            folder itself (``FOLDER/<domain>/system_prompt.txt`` and
            ``FOLDER/<domain>/judge_system_prompt.txt``) or a checkout root holding it
            (``FOLDER/prompts/<domain>/...``). Each file present replaces worldforge's text for its
            domain and kind, read as UTF-8 exactly as it is (nothing stripped, line endings kept);
            a missing file keeps worldforge's text. Only :data:`BENCHMARK_DOMAINS` are read.

    Returns:
        A :class:`PromptSet` whose ``origin`` names the file of every replaced text and
        ``"worldforge"`` for the others.

    Raises:
        WorldforgeError: the folder does not exist or is not a folder; it holds no prompt file
            of any benchmark domain in either layout; a prompt file is not UTF-8, is empty
            (or only whitespace), or cannot be read.
    """
    if folder is None:
        return _defaults()
    path = Path(folder).expanduser()
    if not path.exists():
        raise WorldforgeError(f"{path}: no such folder (give the reference's prompts folder or a checkout holding prompts/)")
    if not path.is_dir():
        raise WorldforgeError(f"{path}: not a folder (give the reference's prompts folder or a checkout holding prompts/)")
    files = _prompt_files(path)
    if not files and (path / "prompts").is_dir():
        files = _prompt_files(path / "prompts")
    if not files:
        raise WorldforgeError(
            f"{path}: no prompt files found. Expected the reference's layout, either <domain>/system_prompt.txt and "
            f"<domain>/judge_system_prompt.txt in this folder or prompts/<domain>/... under it, for at least one of the "
            f"domains {', '.join(BENCHMARK_DOMAINS)}")
    found = _defaults()
    texts = {"system": found.system, "judge": found.judge}
    for (kind, domain), file in sorted(files.items()):
        texts[kind][domain] = _read_prompt(file)
        found.origin[f"{kind}:{domain}"] = str(file.absolute())
    return found
