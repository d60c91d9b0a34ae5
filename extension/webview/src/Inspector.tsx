// The inspector: the fields of the one selected element, read from the current model (so it
// always matches the selection), each change sent as a `set` (or `rename`) operation.
import { useId, useState, type ReactNode } from "react";
import type { Agent, Diagnostic, FlowEdge, FlowModel, FlowOp, Interaction, PatternInfo, SystemNode, Termination } from "../../src/canvas/protocol";
import { SYSTEM_NODE_TYPES } from "../../src/canvas/protocol";
import { cleanTermination, defaultCondition, listFromText, parseJSONObject, setOp } from "./ops";

export const BACKENDS = ["auto", "claude", "codex", "gemini", "command", "dry-run"];
export const INTENTS = ["solve", "verify", "negotiate", "explore", "simulate", "align"];
export const TOPOLOGIES = ["p2p", "manager_worker", "pipeline", "blackboard", "market_auction", "debate_judge", "broker", "router_targeted", "broadcast"];
export const MESSAGE_FORMS = ["nl_text", "structured_json", "acl_performative", "multimodal"];
export const SYNC_MODES = ["turn_based", "req_res", "async", "streaming"];
export const TERMINATION_TYPES = ["max_rounds", "timeout_ms", "judge_decision", "consensus_threshold", "quality_gate", "max_cost_usd", "max_tokens"];
export const VERIFICATIONS = ["critic_loop", "cross_check_vote", "tool_based", "sandbox_constraints", "audit_log"];

type Send = (ops: FlowOp[], label?: string) => void;
/** connect(source, target, into): into is an interaction id, "new", or undefined (as a drag would). */
type Connect = (source: string, target: string, into?: string) => void;
type Reconnect = (edgeId: string, source: string, target: string) => void;

function nodeOptions(flow: FlowModel | null): Array<{ id: string; label: string }> {
  return [...(flow?.agents ?? []), ...(flow?.systemNodes ?? [])].map((n) => ({ id: n.id, label: n.name && n.name !== n.id ? `${n.name} (${n.id})` : n.id }));
}

/**
 * The keyboard way to draw an edge (a drag does the same): a target, and where the edge goes —
 * as a drag would decide, into one of the node's interactions, or a new one (the pattern picker).
 */
function ConnectSection({ id, flow, connect }: { id: string; flow: FlowModel | null; connect: Connect }) {
  const toId = useId();
  const intoId = useId();
  const others = nodeOptions(flow).filter((n) => n.id !== id);
  const [to, setTo] = useState(others[0]?.id ?? "");
  const [into, setInto] = useState("");
  const mine = (flow?.interactions ?? []).filter((it) => (it.edges ?? []).some((e) => e.source === id || e.target === id));
  const target = others.some((n) => n.id === to) ? to : (others[0]?.id ?? "");
  return (
    <section className="ac-section" aria-label="Connect">
      <h3>Connect</h3>
      {others.length === 0 ? (
        <p className="ac-hint">Add another node to connect this one to.</p>
      ) : (
        <>
          <div className="ac-row">
            <label htmlFor={toId}>Connect to…</label>
            <select id={toId} value={target} onChange={(e) => setTo(e.currentTarget.value)}>
              {others.map((n) => (
                <option key={n.id} value={n.id}>
                  {n.label}
                </option>
              ))}
            </select>
          </div>
          <div className="ac-row">
            <label htmlFor={intoId}>Into</label>
            <select id={intoId} value={into} onChange={(e) => setInto(e.currentTarget.value)}>
              <option value="">{mine.length ? "its interaction, or pick a pattern" : "a new interaction (pick a pattern)"}</option>
              {mine.map((it) => (
                <option key={it.id} value={it.id}>
                  interaction {it.id} ({it.patternId})
                </option>
              ))}
              {mine.length ? <option value="new">a new interaction (pick a pattern)</option> : null}
            </select>
          </div>
          <button type="button" className="ac-small" aria-label={`Connect ${id} to ${target}`} onClick={() => connect(id, target, into || undefined)}>
            Connect
          </button>
        </>
      )}
    </section>
  );
}

function Row({ label, children, id }: { label: string; children: ReactNode; id: string }) {
  return (
    <div className="ac-row">
      <label htmlFor={id}>{label}</label>
      {children}
    </div>
  );
}

/** A text field that commits on Enter or blur, and only when the value changed. */
function TextField(props: { label: string; value: string; onCommit: (v: string) => void; multiline?: boolean; placeholder?: string; list?: string }) {
  const id = useId();
  const commit = (v: string) => {
    if (v !== props.value) props.onCommit(v);
  };
  return (
    <Row label={props.label} id={id}>
      {props.multiline ? (
        <textarea
          id={id}
          key={props.value}
          defaultValue={props.value}
          rows={4}
          placeholder={props.placeholder}
          onBlur={(e) => commit(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) e.currentTarget.blur();
          }}
        />
      ) : (
        <input
          id={id}
          key={props.value}
          type="text"
          defaultValue={props.value}
          placeholder={props.placeholder}
          list={props.list}
          onBlur={(e) => commit(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter") e.currentTarget.blur();
            if (e.key === "Escape") {
              e.currentTarget.value = props.value;
              e.currentTarget.blur();
            }
          }}
        />
      )}
    </Row>
  );
}

function NumberField(props: { label: string; value: number | undefined; onCommit: (v: number | undefined) => void; step?: string }) {
  const id = useId();
  const shown = props.value === undefined ? "" : String(props.value);
  return (
    <Row label={props.label} id={id}>
      <input
        id={id}
        key={shown}
        type="number"
        step={props.step ?? "1"}
        defaultValue={shown}
        onBlur={(e) => {
          const t = e.currentTarget.value.trim();
          const v = t === "" ? undefined : Number(t);
          if (v !== undefined && !Number.isFinite(v)) return;
          if (v !== props.value) props.onCommit(v);
        }}
        onKeyDown={(e) => {
          if (e.key === "Enter") e.currentTarget.blur();
        }}
      />
    </Row>
  );
}

function SelectField(props: { label: string; value: string; options: string[]; onCommit: (v: string) => void; allowEmpty?: boolean }) {
  const id = useId();
  const opts = props.options.includes(props.value) || props.value === "" ? props.options : [props.value, ...props.options];
  return (
    <Row label={props.label} id={id}>
      <select id={id} value={props.value} onChange={(e) => e.currentTarget.value !== props.value && props.onCommit(e.currentTarget.value)}>
        {props.allowEmpty !== false ? <option value="">(unset)</option> : null}
        {opts.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    </Row>
  );
}

function ListField(props: { label: string; value: string[] | undefined; onCommit: (v: string[]) => void; placeholder?: string }) {
  const text = (props.value ?? []).join(", ");
  return <TextField label={props.label} value={text} placeholder={props.placeholder ?? "comma-separated"} onCommit={(t) => props.onCommit(listFromText(t))} />;
}

function JSONField(props: { label: string; value: Record<string, unknown> | undefined; onCommit: (v: Record<string, unknown> | null) => void }) {
  const id = useId();
  const text = props.value && Object.keys(props.value).length ? JSON.stringify(props.value, null, 2) : "";
  const [error, setError] = useState<string>();
  return (
    <Row label={props.label} id={id}>
      <textarea
        id={id}
        key={text}
        className="ac-json"
        defaultValue={text}
        rows={Math.min(10, Math.max(3, text.split("\n").length))}
        aria-invalid={error ? true : undefined}
        placeholder='{"key": "value"}'
        onBlur={(e) => {
          const r = parseJSONObject(e.currentTarget.value);
          if (!r.ok) return setError(r.error);
          setError(undefined);
          if (JSON.stringify(r.value ?? {}) !== JSON.stringify(props.value ?? {})) props.onCommit(r.value);
        }}
      />
      {error ? (
        <div className="ac-field-error" role="alert">
          {error}
        </div>
      ) : null}
    </Row>
  );
}

function CheckField(props: { label: string; checked: boolean; onCommit: (v: boolean) => void }) {
  const id = useId();
  return (
    <div className="ac-check">
      <input id={id} type="checkbox" checked={props.checked} onChange={(e) => props.onCommit(e.currentTarget.checked)} />
      <label htmlFor={id}>{props.label}</label>
    </div>
  );
}

function Diagnostics({ ds, reveal }: { ds: Diagnostic[]; reveal: (path: string) => void }) {
  if (ds.length === 0) return null;
  return (
    <section className="ac-section" aria-label="Problems">
      <h3>Problems</h3>
      <ul className="ac-diag-list">
        {ds.map((d, i) => (
          <li key={i} className={`ac-diag ac-diag-${d.severity}`}>
            <button type="button" className="ac-link" onClick={() => reveal(d.path ?? "")} title="Reveal in YAML">
              {d.severity}: {d.message} <span className="ac-code">({d.code})</span>
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}

function RuntimeFields({ path, rt, send, optional }: { path: string; rt: Agent["runtime"]; send: Send; optional?: boolean }) {
  const backend = rt?.backendId ?? "";
  return (
    <>
      <SelectField
        label="Backend"
        value={backend}
        options={BACKENDS}
        allowEmpty={optional || !backend}
        onCommit={(v) => send([optional && v === "" ? setOp(`${path}/runtime`, null) : setOp(`${path}/runtime/backendId`, v)], "Set backend")}
      />
      {rt ? (
        <>
          <TextField label="Model" value={rt.model ?? ""} onCommit={(v) => send([setOp(`${path}/runtime/model`, v)], "Set model")} />
          <SelectField label="Working folder" value={rt.cwdMode ?? ""} options={["workspace", "agentHome"]} onCommit={(v) => send([setOp(`${path}/runtime/cwdMode`, v)], "Set cwdMode")} />
          {backend === "command" ? (
            <ListField label="Command" value={rt.command} placeholder="argv, comma-separated" onCommit={(v) => send([setOp(`${path}/runtime/command`, v)], "Set command")} />
          ) : null}
          <ListField label="Environment" value={rt.env} placeholder="variable NAMES only" onCommit={(v) => send([setOp(`${path}/runtime/env`, v)], "Set env")} />
        </>
      ) : null}
    </>
  );
}

function AgentInspector({ a, send, flow, connect }: { a: Agent; send: Send; flow: FlowModel | null; connect: Connect }) {
  const set = (field: string, label: string) => (v: unknown) => send([setOp(`${a.path}/${field}`, v)], label);
  return (
    <>
      <TextField label="Id" value={a.id} onCommit={(v) => v.trim() && send([{ op: "rename", id: a.id, newId: v.trim() }], "Rename")} />
      <TextField label="Name" value={a.name ?? ""} onCommit={set("name", "Set name")} />
      <TextField label="Role" value={a.role ?? ""} list="ac-roles" onCommit={set("role", "Set role")} />
      <TextField label="Description" value={a.description ?? ""} onCommit={set("description", "Set description")} />
      <TextField label="Instructions" value={a.instructions ?? ""} multiline onCommit={set("instructions", "Set instructions")} />
      <RuntimeFields path={a.path} rt={a.runtime} send={send} />
      <ListField label="Files" value={a.files} onCommit={set("files", "Set files")} />
      <ListField label="Skills" value={a.skills} onCommit={set("skills", "Set skills")} />
      <ListField label="MCP" value={a.mcp} onCommit={set("mcp", "Set mcp")} />
      <ListField label="Rules" value={a.rules} onCommit={set("rules", "Set rules")} />
      <ConnectSection id={a.id} flow={flow} connect={connect} />
      <datalist id="ac-roles">
        {["orchestrator", "manager", "worker", "planner", "coder", "tester", "reviewer", "critic", "judge", "debater", "verifier"].map((r) => (
          <option key={r} value={r} />
        ))}
      </datalist>
    </>
  );
}

function SystemInspector({ s, send, flow, connect }: { s: SystemNode; send: Send; flow: FlowModel | null; connect: Connect }) {
  return (
    <>
      <TextField label="Id" value={s.id} onCommit={(v) => v.trim() && send([{ op: "rename", id: s.id, newId: v.trim() }], "Rename")} />
      <SelectField label="Type" value={s.type} options={[...SYSTEM_NODE_TYPES]} allowEmpty={false} onCommit={(v) => send([setOp(`${s.path}/type`, v)], "Set type")} />
      <TextField label="Name" value={s.name ?? ""} onCommit={(v) => send([setOp(`${s.path}/name`, v)], "Set name")} />
      <RuntimeFields path={s.path} rt={s.runtime} send={send} optional />
      <JSONField label="Params" value={s.params} onCommit={(v) => send([setOp(`${s.path}/params`, v)], "Set params")} />
      <ConnectSection id={s.id} flow={flow} connect={connect} />
    </>
  );
}

type Mode = "none" | "single" | "any" | "all";

function ConditionRow({ c, onChange, onRemove, index }: { c: Termination; onChange: (c: Termination) => void; onRemove?: () => void; index: number }) {
  return (
    <fieldset className="ac-condition" aria-label={`Condition ${index + 1}`}>
      <SelectField label="Type" value={c.type ?? ""} options={TERMINATION_TYPES} allowEmpty={false} onCommit={(t) => onChange(defaultCondition(t))} />
      {c.type === "max_rounds" ? <NumberField label="Rounds" value={c.rounds} onCommit={(v) => onChange({ ...c, rounds: v })} /> : null}
      {c.type === "timeout_ms" ? <NumberField label="Timeout (ms)" value={c.ms} onCommit={(v) => onChange({ ...c, ms: v })} /> : null}
      {c.type === "consensus_threshold" ? <NumberField label="Threshold" step="0.05" value={c.threshold} onCommit={(v) => onChange({ ...c, threshold: v })} /> : null}
      {c.type === "max_cost_usd" ? <NumberField label="Cost limit (USD)" step="any" value={c.usd} onCommit={(v) => onChange({ ...c, usd: v })} /> : null}
      {c.type === "max_tokens" ? <NumberField label="Token limit" value={c.tokens} onCommit={(v) => onChange({ ...c, tokens: v })} /> : null}
      {c.type === "quality_gate" ? (
        <>
          <TextField label="Metric" value={c.metric ?? ""} onCommit={(v) => onChange({ ...c, metric: v })} />
          <SelectField label="Op" value={c.op ?? ">="} options={[">=", "<="]} allowEmpty={false} onCommit={(v) => onChange({ ...c, op: v })} />
          <NumberField label="Value" step="any" value={c.value} onCommit={(v) => onChange({ ...c, value: v })} />
        </>
      ) : null}
      {onRemove ? (
        <button type="button" className="ac-small" onClick={onRemove} aria-label={`Remove condition ${index + 1}`}>
          Remove
        </button>
      ) : null}
    </fieldset>
  );
}

/** The termination editor: no condition, one condition, or any:/all: lists of conditions. */
export function TerminationEditor({ value, onChange }: { value: Termination | undefined; onChange: (t: Termination | null) => void }) {
  const id = useId();
  const mode: Mode = !value ? "none" : value.any ? "any" : value.all ? "all" : "single";
  const list = value?.any ?? value?.all ?? (value ? [value] : []);
  const commit = (m: Mode, conds: Termination[]) => {
    if (m === "none" || conds.length === 0) return onChange(null);
    if (m === "single") return onChange(cleanTermination(conds[0]));
    return onChange(cleanTermination(m === "any" ? { any: conds } : { all: conds }));
  };
  return (
    <section className="ac-section ac-termination" aria-label="Termination">
      <h3>Termination</h3>
      <div className="ac-row">
        <label htmlFor={id}>Stops when</label>
        <select
          id={id}
          value={mode}
          onChange={(e) => {
            const m = e.currentTarget.value as Mode;
            commit(m, list.length ? list : [defaultCondition("max_rounds")]);
          }}
        >
          <option value="none">(no condition — not allowed)</option>
          <option value="single">one condition</option>
          <option value="any">any of</option>
          <option value="all">all of</option>
        </select>
      </div>
      {mode === "none" ? <div className="ac-diag ac-diag-error">Every interaction needs a termination condition.</div> : null}
      {list.map((c, i) => (
        <ConditionRow
          key={i}
          index={i}
          c={c}
          onChange={(nc) => commit(mode, list.map((x, j) => (j === i ? nc : x)))}
          onRemove={mode === "any" || mode === "all" ? () => commit(mode, list.filter((_, j) => j !== i)) : undefined}
        />
      ))}
      {mode === "any" || mode === "all" ? (
        <button type="button" className="ac-small" onClick={() => commit(mode, [...list, defaultCondition("timeout_ms")])}>
          Add condition
        </button>
      ) : null}
    </section>
  );
}

function EdgeInspector(props: { e: FlowEdge; it: Interaction; flow: FlowModel | null; send: Send; patterns: PatternInfo[]; reveal: (path: string) => void; reconnect: Reconnect }) {
  const { e, it, send, patterns, reveal } = props;
  const ends = nodeOptions(props.flow);
  const d = e.data ?? {};
  const dp = `${e.path}/data`;
  const axis = (name: keyof typeof d, options: string[], label: string) => (
    <SelectField label={label} value={(d[name] as string) ?? ""} options={options} onCommit={(v) => send([setOp(`${dp}/${name}`, v)], `Set ${name}`)} />
  );
  const verif = new Set(d.verification ?? []);
  return (
    <>
      <div className="ac-edge-ends" role="group" aria-label="Ends (reconnect)">
        <SelectField label="From" value={e.source} options={ends.map((n) => n.id)} allowEmpty={false} onCommit={(v) => props.reconnect(e.id, v, e.target)} />
        <span aria-hidden="true">→</span>
        <SelectField label="To" value={e.target} options={ends.map((n) => n.id)} allowEmpty={false} onCommit={(v) => props.reconnect(e.id, e.source, v)} />
      </div>
      <section className="ac-section" aria-label="Interaction">
        <h3>
          Interaction {it.id}{" "}
          <button type="button" className="ac-small" onClick={() => reveal(it.path)} aria-label={`Reveal interaction ${it.id} in YAML`}>
            Reveal
          </button>
        </h3>
        <SelectField
          label="Pattern"
          value={it.patternId}
          options={patterns.map((p) => p.patternId)}
          allowEmpty={false}
          onCommit={(v) => send([setOp(`${it.path}/patternId`, v)], "Set pattern")}
        />
        <TextField label="Name" value={it.name ?? ""} onCommit={(v) => send([setOp(`${it.path}/name`, v)], "Set name")} />
        <ListField label="Depends on" value={it.dependsOn} placeholder="interaction ids" onCommit={(v) => send([setOp(`${it.path}/dependsOn`, v)], "Set dependsOn")} />
      </section>
      <section className="ac-section" aria-label="Axes">
        <h3>Axes</h3>
        {axis("intent", INTENTS, "Intent")}
        {axis("topology", TOPOLOGIES, "Topology")}
        {axis("messageForm", MESSAGE_FORMS, "Message form")}
        {axis("sync", SYNC_MODES, "Sync")}
        <fieldset className="ac-verification">
          <legend>Verification</legend>
          {VERIFICATIONS.map((v) => (
            <CheckField
              key={v}
              label={v}
              checked={verif.has(v)}
              onCommit={(on) => {
                const next = VERIFICATIONS.filter((x) => (x === v ? on : verif.has(x)));
                for (const x of verif) if (!VERIFICATIONS.includes(x)) next.push(x);
                send([setOp(`${dp}/verification`, next)], "Set verification");
              }}
            />
          ))}
        </fieldset>
      </section>
      <TerminationEditor value={d.termination} onChange={(t) => send([{ op: "set", path: `${dp}/termination`, value: t }], "Set termination")} />
      <section className="ac-section" aria-label="Parameters">
        <h3>Parameters</h3>
        <JSONField label="Params" value={d.params} onCommit={(v) => send([setOp(`${dp}/params`, v)], "Set params")} />
        <CheckField label="Logs" checked={d.observability?.logs ?? true} onCommit={(v) => send([setOp(`${dp}/observability/logs`, v)], "Set logs")} />
        <CheckField label="Traces" checked={d.observability?.traces ?? false} onCommit={(v) => send([setOp(`${dp}/observability/traces`, v)], "Set traces")} />
      </section>
    </>
  );
}

export type Selected =
  | { kind: "agent"; agent: Agent }
  | { kind: "system"; node: SystemNode }
  | { kind: "edge"; edge: FlowEdge; interaction: Interaction }
  | undefined;

export function Inspector(props: {
  flow: FlowModel | null;
  selected: Selected;
  count: number;
  diagnostics: Diagnostic[];
  patterns: PatternInfo[];
  send: Send;
  reveal: (path: string) => void;
  connect: Connect;
  reconnect: Reconnect;
  onClose: () => void;
}) {
  const { selected: s } = props;
  let title = "Nothing selected";
  let path = "";
  let body: ReactNode = <p className="ac-hint">Select a node or an edge to edit it. Tab cycles through them.</p>;
  if (props.count > 1) {
    title = `${props.count} selected`;
    body = <p className="ac-hint">Delete removes them; the arrow keys move them.</p>;
  } else if (s?.kind === "agent") {
    title = `Agent ${s.agent.id}`;
    path = s.agent.path;
    body = <AgentInspector key={s.agent.id} a={s.agent} send={props.send} flow={props.flow} connect={props.connect} />;
  } else if (s?.kind === "system") {
    title = `${s.node.type} ${s.node.id}`;
    path = s.node.path;
    body = <SystemInspector key={s.node.id} s={s.node} send={props.send} flow={props.flow} connect={props.connect} />;
  } else if (s?.kind === "edge") {
    title = `Edge ${s.edge.id}`;
    path = s.edge.path;
    body = (
      <EdgeInspector key={s.edge.id} e={s.edge} it={s.interaction} flow={props.flow} send={props.send} patterns={props.patterns} reveal={props.reveal} reconnect={props.reconnect} />
    );
  }
  return (
    <aside className="ac-panel ac-inspector" aria-label="Inspector" data-testid="inspector">
      <header className="ac-panel-head">
        <h2>{title}</h2>
        {path ? (
          <button type="button" className="ac-small" onClick={() => props.reveal(path)} title="Show this element in the YAML text">
            Reveal in YAML
          </button>
        ) : null}
        <button type="button" className="ac-icon-button" onClick={props.onClose} aria-label="Hide the inspector">
          ×
        </button>
      </header>
      <div className="ac-panel-body">
        {props.count === 1 ? <Diagnostics ds={props.diagnostics} reveal={props.reveal} /> : null}
        {body}
      </div>
    </aside>
  );
}
