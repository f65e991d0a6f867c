// Help texts live apart from the commands so that --help and usage errors load no SDK. Every
// line fits 80 columns (test/cli checks it); each command's options are read from its text for
// "did you mean" suggestions, so an option missing from its help is a test failure too.

export const PROGRAM_HELP = `Usage: symfonic <command> [options]

Commands:
  demo          run a bundled delegation tree (scripted, no network) and draw
                it from its trace; --suspend pauses it for an approval,
                --resume FILE goes on from the snapshot it wrote
  tree FILE     draw the delegation trees in an OTLP/JSON file (one document,
                or one request per line); tree --jaeger URL TRACE_ID draws a
                trace stored in Jaeger; --html FILE writes a web page of it
  budget        print each tenant's spend, reservations in flight and limit
                from a Redis budget store
  help [CMD]    show help for the program or a command

Options:
  -h, --help    show help (also after a command: symfonic demo --help)
  --version     print the version

Pictures fit --width N columns, else $COLUMNS, else the terminal's width, else
80. Colour is used only when stdout is a terminal and NO_COLOR is not set.
`;

const FIT = `  --width N             fit the picture to N columns (40 to 1000; default
                        $COLUMNS, else the terminal's width, else 80). When it
                        is too wide, the time bar narrows to 12 columns, then
                        columns are dropped in this order: own tok, own cost,
                        run, the time bar, subtree tok; long names and deep
                        indentation are cut with "…"
`;

export const DEMO_HELP = `Usage: symfonic demo [options]

Runs a bundled delegation tree and draws it from its trace: a router with three
children (researcher, analyst, writer), the researcher delegating to a
fact_checker, which tries to delegate once more and is refused at the default
depth limit; researcher and analyst run in parallel. By default every agent
plays a scripted model (demo-large / demo-small, made-up prices): no network,
the same tree every time.

Options:
  --tenant ID           tenant the run is scoped to (default "demo")
  --max-depth N         FrameworkConfig agent.maxAgentDepth (default 2); 1
                        refuses the grandchild too, 3 lets the archivist run
  --budget-usd X        a maxCostUsd budget for the tenant; 0.04 refuses the
                        researcher and the root still answers, 0.000001
                        refuses the root itself
  --json                print the root run as one JSON object on stdout and
                        nothing else: each run's RunNode fields with its
                        traceId, costUsd, totalCostUsd, startOffsetMs and
                        durationMs, and the root's answer and error
${FIT}  --html FILE           also write the tree as one self-contained web page
  --otlp URL            also export the trace over OTLP/HTTP to URL, a base
                        like http://localhost:4318 ("/v1/traces" is
                        appended), and print its Jaeger link
  --jaeger-url URL      the Jaeger UI the link points at (default
                        http://localhost:16686)
  --provider NAME       "scripted" (default) or "openai-compatible" to run the
                        same tree on a real model, with:
  --base-url URL          the API base, e.g. http://localhost:11434/v1
  --model NAME            the model every agent uses
  --api-key KEY           bearer token (default: $OPENAI_API_KEY; none for
                          local servers)
  --remote              serve the fact_checker from a second process and
                        delegate to it over A2A (loopback); its runs are
                        marked "(remote, pid N)" in the picture
  --events              print every event of the run (run.started, text.delta,
                        ...) as one JSON line on stdout as it happens; the
                        picture goes to stderr. On a terminal without it, the
                        tree is drawn live as it runs, then the final picture
  --suspend             the fact_checker, two levels down, also buys a report
                        with a tool that needs a person's approval, so the
                        tree suspends: the picture shows the paused branch,
                        the snapshot goes to a file, and the interruption's
                        id and the command that resumes are printed. (Named
                        for what the run does: a flag named "approve" would
                        read as if it approved the purchase.)
  --snapshot FILE       where the snapshot goes (default
                        symfonic-demo.snapshot.json); the trace so far goes
                        beside it (symfonic-demo.trace.jsonl: symfonic tree
                        draws it)
  --resume FILE         go on from FILE, in this process or any other: the
                        same agents, run ids and trace; then FILE is removed,
                        as a snapshot resumes once
  --decide ID=WHAT      with --resume, one per interruption; WHAT is approve,
                        decline, decline:REASON (the model reads why),
                        answer:TEXT (a question) or retry (a budget)
  --approve-all         with --resume, approve each approval --decide does not
                        name
  --turns N             the root answers N turns (1 to 5, default 1) of one
                        session "demo-session" in an InMemorySessionStore,
                        each a follow-up the scripted model answers from the
                        turns before; each turn's tree is drawn, then each
                        turn's root run id, status, tokens and cost and the
                        session's total. With --json: { sessionId, turns: [one
                        --json object a turn], total: { usage, costUsd,
                        turns } }. Not with --suspend or --resume
  -h, --help            show this help

Snapshots are signed with $SYMFONIC_SNAPSHOT_KEY (16+ characters), else with
a key of the demo's, which catches an edited file but keeps no secret.

Exit status: 0 when the root run answered (refused delegations below it
included) or suspended and its snapshot was written, 1 when the root run
failed or was refused (the error is printed on stderr), a file could not be
written or the OTLP export failed, 2 for a usage error, or a snapshot file
that is missing, altered, signed with another key or not the demo's, or
decisions that do not match the interruptions it waits on.
`;

export const TREE_HELP = `Usage: symfonic tree [options] FILE
       symfonic tree [options] --jaeger URL TRACE_ID
       symfonic tree --session ID --tenant T --redis URL [--jaeger URL]
                     [--json | --html FILE]
       symfonic tree --session ID --tenant T --jaeger URL [--json | --html FILE]

Draws the delegation trees recorded in FILE: OTLP/JSON, either one JSON object
(pretty-printed or not: an ExportTraceServiceRequest, or a saved answer of
Jaeger's /api/v3/traces/{id}) or one ExportTraceServiceRequest per line, as
the OpenTelemetry Collector's file exporter writes it (lines without spans,
e.g. metrics, are skipped). "-" reads standard input. FILE is read line by
line, so its size is not limited; one line or pretty-printed document is, by
--max-document-mb. Each root run gets its own picture, with its trace id.

Options:
  --jaeger URL          read trace TRACE_ID from Jaeger's query service at URL:
                        the address of the Jaeger UI, http://localhost:16686
                        by default (http://127.0.0.1:24686 under npm run
                        stack), not the collector's OTLP port (4318)
  --json                print each root run as one JSON object (a JSON array
                        when there are several), nothing else on stdout: each
                        run's RunNode fields with its traceId, costUsd,
                        totalCostUsd, startOffsetMs and durationMs
  --html FILE           write the trees as one self-contained web page
                        (no network: agents, outcomes, tokens, cost, time
                        bars, the trace id linked to Jaeger) instead of
                        drawing them
  --jaeger-ui URL       the Jaeger UI the page links trace ids to (default:
                        the --jaeger URL; without either, no link)
  --session ID          every turn of session ID, oldest first, as its
                        RedisSessionStore keeps them (status, tokens, cost,
                        run and trace ids) and the session's totals; with
                        --jaeger, each turn's tree drawn from its trace;
                        --json prints { sessionId, tenantId, turns: [each
                        turn's record], total: { usage, costUsd, turns } },
                        --html FILE writes every turn's tree on one page
                        under the turn list and the session's total.
                        With --jaeger and no --redis, the turns are found
                        in Jaeger alone: the finished root runs whose spans
                        carry symfonic.session_id ID and symfonic.tenant_id
                        T (the last 30 days), each drawn as a turn
  --tenant T            the tenant the session is of (with --session)
  --redis URL           the session store's Redis (with --session)
  --key-prefix P        the store's keyPrefix (default symfonic:sessions:)
${FIT}  --max-document-mb N   the largest line or pretty-printed JSON document
                        read, in MB (default 256, at most 500)
  -h, --help            show this help

Exit status: 0 on success; 2 for a usage error, an unreadable file, a line
that is not valid JSON or not an OTLP trace request (the message names the
file and line), a file without any symfonic agent runs, or a trace Jaeger
does not hold or cannot be read from (the message says what answered).
`;

export const BUDGET_HELP = `Usage: symfonic budget --redis URL [options]

Prints what a RedisBudgetStore holds, and writes nothing: for each tenant,
then each of its users and sessions, the spend its limit counts (inside the
window of a rolling limit, since the start of the current day, week or month
of a calendar one), what model calls in flight hold (ended leases are not
counted), the limit the last reserve checked against ("none seen" before
any), how the limit counts (all time, rolling, or the period and its time
zone) and when the count resets.

Options:
  --redis URL           the Redis server, e.g. redis://127.0.0.1:6379/0
                        (default: $SYMFONIC_REDIS_URL)
  --key-prefix P        the store's keyPrefix (default "symfonic:")
  --tenant ID           only this tenant (repeatable); default every tenant
                        the store has seen
  --width N             fit N columns (40 to 1000; default $COLUMNS, else the
                        terminal's width, else 80): a table when it fits, else
                        a paragraph a tenant, user or session
  --json                print { store, tenants: [{ tenantId, spent,
                        totalSpent, reserved, reservations, limit, period:
                        { start, resetsAt } | null, levels: [{ level, id,
                        spent, totalSpent, reserved, limit }] }] } as JSON
                        and nothing else on stdout
  -h, --help            show this help

Exit status: 0 on success, 1 when Redis cannot be reached (the message names
the store and what happened, e.g. "connection refused at
redis://127.0.0.1:6379"), 2 for a usage error.
`;

/** Each command's help, by command name. */
export const COMMAND_HELP: Readonly<Record<string, string>> = { demo: DEMO_HELP, tree: TREE_HELP, budget: BUDGET_HELP };

/** The long options a command's help lists ("--width", ...), in the order it lists them. */
export function commandOptions(command: string): string[] {
  const help = Object.hasOwn(COMMAND_HELP, command) ? COMMAND_HELP[command]! : PROGRAM_HELP;
  return [...new Set([...help.matchAll(/^ {2,}(?:-\w, )?(--[a-z][a-z0-9-]*)/gm)].map((m) => m[1]!))];
}
