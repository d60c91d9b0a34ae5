// The canvas's node and edge components. The run overlay comes through a context so a run
// event re-renders only the elements, never rebuilds the graph; so do the edges' drawn shapes
// and their labels' places (App.tsx computes them for all edges at once, to keep labels apart).
import { createContext, Fragment, memo, useContext, useSyncExternalStore, type ReactNode } from "react";
import { createPortal } from "react-dom";
import { BaseEdge, EdgeLabelRenderer, Handle, Position, type EdgeProps, type NodeProps } from "@xyflow/react";
import type { Diagnostic, Severity } from "../../src/canvas/protocol";
import { DrawnEdges } from "./drawnEdges";
import { arrowPath, edgePath } from "./edgeGeometry";
import type { DrawnLabel } from "./drawing";
import { INTERACTION_COLOURS, INTERACTION_DASHES, type AgentNodeData, type CanvasEdge, type MissingNodeData, type SystemNodeData } from "./graph";
import { post } from "./host";
import { Icon } from "./icons";
import type { PlacedLabel } from "./labelPlacement";
import { emptyOverlay, runLine, type RunOverlay, type RunState } from "./overlay";
import { agentSpendLabel, type AgentSpend } from "../../src/canvas/spend";
import { roleIcon } from "./roles";

export interface CanvasContextValue {
  overlay: RunOverlay;
  now: number;
  selectEdge: (id: string) => void;
}
export const RunContext = createContext<CanvasContextValue>({ overlay: emptyOverlay, now: 0, selectEdge: () => undefined });

/** The edges' drawing (drawnEdges.ts): one store for the canvas, each edge reads its own entry. */
export const DrawnEdgesContext = createContext(new DrawnEdges());

/** The layer the edges draw their labels into (LabelLayer); none while labels are not drawn. */
export const LabelLayerContext = createContext<HTMLElement | null>(null);

/** Codicon is one of @vscode/codicons' glyphs (bundled with the webview; decorative). */
export function Codicon({ name, className }: { name: string; className?: string }) {
  return <span className={`codicon codicon-${name}${className ? ` ${className}` : ""}`} aria-hidden="true" />;
}

const SEVERITY_ICON: Record<Severity, string> = { error: "error", warning: "warning", info: "info" };

function ProblemBadge({ ds, severity }: { ds: Diagnostic[]; severity?: Severity }) {
  if (ds.length === 0) return null;
  return (
    <span className={`ac-badge ac-badge-${severity} ac-problems`} aria-label={`${ds.length} problem${ds.length > 1 ? "s" : ""}`} title={ds.map((d) => `${d.severity}: ${d.message}`).join("\n")}>
      <Codicon name={SEVERITY_ICON[severity ?? "error"]} />
      {ds.length}
    </span>
  );
}

function DiagnosticList({ ds }: { ds: Diagnostic[] }) {
  if (ds.length === 0) return null;
  return (
    <div className="ac-node-diags" role="list" aria-label={`${ds.length} problem${ds.length > 1 ? "s" : ""}`}>
      {ds.slice(0, 2).map((d, i) => (
        <div key={i} role="listitem" className={`ac-diag ac-diag-${d.severity}`} title={`${d.code}: ${d.message}`}>
          {d.message}
        </div>
      ))}
      {ds.length > 2 ? <div className="ac-diag ac-diag-more">+{ds.length - 2} more</div> : null}
    </div>
  );
}

/** How each run state reads: its codicon and its words. */
export const RUN_STATES: Record<RunState, { icon: string; text: string }> = {
  running: { icon: "sync", text: "running" },
  waiting: { icon: "bell", text: "waiting for you" },
  failed: { icon: "error", text: "failed" },
  done: { icon: "pass", text: "done" },
};

/** RunBadge is a node's line in the run overlay: its state and the messages it sent. */
function RunBadge({ id }: { id: string }) {
  const { overlay } = useContext(RunContext);
  const r = overlay.nodes[id];
  if (!r) return null;
  const s = r.state ? RUN_STATES[r.state] : undefined;
  return (
    <>
    <div className={`ac-run-line${r.state ? ` ac-run-${r.state}` : ""}`} data-testid={`run-${id}`}>
      {s ? (
        <span className="ac-run-state">
          <Codicon name={s.icon} className={r.state === "running" ? "codicon-modifier-spin" : undefined} />
          {s.text}
        </span>
      ) : null}
      <span className={`ac-badge ac-run-badge${r.active ? " active" : ""}`} title="messages sent in this run">
        {r.messages} msg
      </span>
      <ConflictBadge conflicts={r.conflicts} />
      {overlay.runId && r.turns ? <LastTurnLink runId={overlay.runId} agentId={id} /> : null}
      {overlay.runId && r.turns ? <ForkLink runId={overlay.runId} agentId={id} /> : null}
    </div>
    <SpendLine spend={r.spend} id={id} />
    </>
  );
}

/** SpendLine is what the agent spent so far in the run, on its own line under its state. */
function SpendLine({ spend, id }: { spend?: AgentSpend; id: string }) {
  const text = agentSpendLabel(spend);
  if (!text) return null;
  const how = spend?.metered ? "metered by the model gateway, call by call" : "as its turns reported it";
  return (
    <div className="ac-run-spend" data-testid={`spend-${id}`} title={`spent in this run so far, ${how}`}>
      <Codicon name="credit-card" />
      {text}
    </div>
  );
}

/**
 * LastTurnLink opens the agent's transcript of the run (what it was sent, its reply, its stderr),
 * ending with its last turn. An icon, so the state beside it keeps its words; its name says what
 * it does. "nodrag nopan nokey": a click or Enter is the button's, not the node's.
 */
function LastTurnLink({ runId, agentId }: { runId: string; agentId: string }) {
  return (
    <button
      type="button"
      className="ac-last-turn nodrag nopan nokey"
      aria-label={`Last turn of ${agentId}: open its transcript`}
      title={`Last turn: open ${agentId}'s transcript of run ${runId}`}
      data-testid={`last-turn-${agentId}`}
      onClick={(e) => {
        e.stopPropagation();
        post({ type: "showTranscript", runId, agentId });
      }}
    >
      <Codicon name="history" />
    </button>
  );
}

/** ForkLink starts a new run from the end of one of the agent's turns, which the editor asks for. */
function ForkLink({ runId, agentId }: { runId: string; agentId: string }) {
  return (
    <button
      type="button"
      className="ac-last-turn nodrag nopan nokey"
      aria-label={`Fork from a turn of ${agentId}: a new run from the end of that turn`}
      title={`Fork from a turn of ${agentId}: a new run of ${runId} from the end of that turn`}
      data-testid={`fork-${agentId}`}
      onClick={(e) => {
        e.stopPropagation();
        post({ type: "forkRun", runId, agentId });
      }}
    >
      <Codicon name="repo-forked" />
    </button>
  );
}

/** The agent's proposal collides with another worker's (proposal_conflict): whose, in the title. */
function ConflictBadge({ conflicts }: { conflicts?: string[] }) {
  if (!conflicts || conflicts.length === 0) return null;
  return (
    <span className="ac-badge ac-conflict-badge" role="status" title={`its proposal conflicts with ${conflicts.join("; ")}`} data-testid="conflict-badge">
      ⚠ conflict
    </span>
  );
}

function nodeClass(kind: string, severity: string | undefined, state: RunState | undefined, active: boolean, selected: boolean): string {
  return ["ac-node", `ac-node-${kind}`, severity ? `has-${severity}` : "", state ? `run-${state}` : "", active ? "run-active" : "", selected ? "selected" : ""]
    .filter(Boolean)
    .join(" ");
}

function Handles({ name, children }: { name: string; children: ReactNode }) {
  return (
    <>
      <Handle type="target" position={Position.Left} aria-label={`Drop an edge here to connect it to ${name}`} />
      {children}
      <Handle type="source" position={Position.Right} aria-label={`Drag from here to connect ${name} to another node`} />
    </>
  );
}

export const AgentNode = memo(function AgentNode({ data, selected }: NodeProps & { data: AgentNodeData }) {
  const { overlay } = useContext(RunContext);
  const run = overlay.nodes[data.id];
  return (
    <div className={nodeClass("agent", data.severity, run?.state, !!run?.active, !!selected)} data-testid={`node-${data.id}`}>
      <Handles name={data.name}>
        <div className="ac-node-head">
          <Codicon name={roleIcon(data.role)} className="ac-role-icon" />
          <span className="ac-node-name" title={data.name}>
            {data.name}
          </span>
          <ProblemBadge ds={data.diagnostics} severity={data.severity} />
        </div>
        <div className="ac-node-meta">
          <span className="ac-role" title={data.role ? `role: ${data.role}` : "no role"}>
            {data.role || "no role"}
          </span>
          {data.files > 0 ? (
            <span className="ac-badge ac-files" title={`${data.files} file${data.files > 1 ? "s" : ""} in its sandbox`} aria-label={`${data.files} file${data.files > 1 ? "s" : ""}`}>
              <Codicon name="files" />
              {data.files}
            </span>
          ) : null}
          <span className="ac-badge ac-backend" title="backend">
            {data.backend}
          </span>
        </div>
        <RunBadge id={data.id} />
        <DiagnosticList ds={data.diagnostics} />
      </Handles>
    </div>
  );
});

export const SystemNodeView = memo(function SystemNodeView({ data, selected }: NodeProps & { data: SystemNodeData }) {
  const { overlay } = useContext(RunContext);
  const run = overlay.nodes[data.id];
  return (
    <div className={`${nodeClass("system", data.severity, run?.state, !!run?.active, !!selected)} ac-sys-${data.sysType}`} data-testid={`node-${data.id}`}>
      <Handles name={data.name}>
        <div className="ac-node-head">
          <Icon name={data.sysType} title={data.sysType} />
          <span className="ac-node-name" title={data.name}>
            {data.name}
          </span>
          <ProblemBadge ds={data.diagnostics} severity={data.severity} />
        </div>
        <div className="ac-node-meta">
          <span className="ac-badge ac-systype">{data.sysType.toUpperCase()}</span>
          {data.backend ? (
            <span className="ac-badge ac-backend" title="backend">
              {data.backend}
            </span>
          ) : null}
        </div>
        <RunBadge id={data.id} />
        <DiagnosticList ds={data.diagnostics} />
      </Handles>
    </div>
  );
});

/**
 * A node an edge names that the flow does not define: a dashed placeholder in the error colour,
 * named by the id the edge gives, with the problem the edge has. It has no place in the file, so
 * it cannot be moved or connected; fixing the edge (or adding the agent) makes it go.
 */
export const MissingNodeView = memo(function MissingNodeView({ data, selected }: NodeProps & { data: MissingNodeData }) {
  return (
    <div className={`${nodeClass("missing", "error", undefined, false, !!selected)}`} data-testid={`node-${data.id}`}>
      <Handles name={data.name}>
        <div className="ac-node-head">
          <Codicon name="question" className="ac-role-icon" />
          <span className="ac-node-name" title={data.name}>
            {data.name || "(no id)"}
          </span>
        </div>
        <div className="ac-node-meta">
          <span className="ac-role">not in the flow</span>
        </div>
        <DiagnosticList ds={data.diagnostics} />
      </Handles>
    </div>
  );
});

/**
 * interactionClass is the colour (and past twelve interactions, the line style) of an
 * interaction's edges and of its legend entry: twelve colours solid, then dashed, then dotted.
 */
export const interactionClass = (index: number) => `ac-ix-${index % INTERACTION_COLOURS} ac-dash-${Math.floor(index / INTERACTION_COLOURS) % INTERACTION_DASHES}`;

/** The interaction hovered in the legend (its edges stand out), if any. */
export const HighlightContext = createContext<string | undefined>(undefined);

/**
 * edgeClass is what an edge's path, arrow and label share: its colour and line style (its
 * interaction's, always: a problem is a marker, a run state a halo, never another line style),
 * its run state, selection and highlight.
 */
function edgeClass(data: CanvasEdge["data"], run: RunOverlay["edges"][string] | undefined, selected: boolean, highlighted?: string): string {
  return [
    "ac-edge",
    highlighted !== undefined && highlighted === data?.interactionId ? "ac-hl" : "",
    interactionClass(data?.interactionIndex ?? 0),
    run?.state ? `run-${run.state}` : "",
    run?.active ? "run-active" : "",
    selected ? "selected" : "",
  ]
    .filter(Boolean)
    .join(" ");
}

/** useDrawn is an edge's entry in the canvas's drawing (re-rendered only when it changes). */
function useDrawn(id: string) {
  const store = useContext(DrawnEdgesContext);
  return useSyncExternalStore(store.subscribe, () => store.get(id));
}

/**
 * The edge itself: its curve and arrowhead, and its label in the label layer above all edges (a
 * portal: an edge React Flow leaves out, out of view in a big flow, draws no label either).
 */
export const InteractionEdge = memo(function InteractionEdge(props: EdgeProps<CanvasEdge>) {
  const { id, data, selected } = props;
  const { overlay } = useContext(RunContext);
  const layer = useContext(LabelLayerContext);
  const highlighted = useContext(HighlightContext);
  const drawn = useDrawn(id);
  if (!drawn) return null;
  const run = overlay.edges[id];
  const cls = edgeClass(data, run, !!selected, highlighted);
  const d = edgePath(drawn.geometry);
  return (
    <>
      {run?.state ? <path className={`ac-edge-halo run-${run.state}${run.active ? " run-active" : ""}`} d={d} /> : null}
      <BaseEdge id={id} path={d} className={`${cls}${drawn.geometry.route ? " ac-routed" : ""}`} interactionWidth={16} {...{ "data-interaction": data?.interactionId }} />
      <path className={`ac-arrow ${cls}`} d={arrowPath(drawn.geometry)} />
      {layer && drawn.label ? createPortal(<EdgeLabel id={id} data={data} label={drawn.label} selected={!!selected} />, layer) : null}
      {layer && drawn.marker && data ? createPortal(<ProblemMarker id={id} data={data} place={drawn.marker} />, layer) : null}
    </>
  );
});

/** The text of a label's tooltip: the whole label, the edges it names, and their shared problems. */
function labelTitle(data: CanvasEdge["data"], label: DrawnLabel): string {
  const it = data?.interactionId ?? "";
  const out = [`${it}: ${data?.label ?? ""}`];
  const n = data?.labelEdges?.length ?? 1;
  if (n > 1) out.push(data?.labelNode ? `its ${n} edges at ${data.labelNode.replace(/^missing:/, "")}` : `its ${n} edges between these two nodes`);
  if (label.problems) out.push(...(data?.diagnostics ?? []).map((d) => `${d.severity}: ${d.message}`));
  return out.join("\n");
}

const EdgeLabel = memo(function EdgeLabel({ id, data, label, selected }: { id: string; data: CanvasEdge["data"]; label: DrawnLabel; selected: boolean }) {
  const { overlay, now, selectEdge } = useContext(RunContext);
  const highlighted = useContext(HighlightContext);
  const run = overlay.edges[id];
  // the interaction's run, on its first label: the round, the time left, messages a minute on all its edges
  const line = data?.runLine ? runLine(overlay, data.interactionId, now) : undefined;
  const cls = edgeClass(data, run, selected, highlighted);
  const { place, form } = label;
  // Centred on its place by a zero-size anchor (left/top, flex centring), not by a transform:
  // a transform per label is a paint chunk per label, which every frame of a pan pays for. Its
  // box is the size its place was found for (a run line's room kept from the start), so it never
  // grows over what is next to it.
  return (
    <div className="ac-edge-anchor" style={{ left: place.x, top: place.y }}>
      <div
        className={`ac-edge-label nodrag nopan ${cls}${label.problems ? ` has-${label.severity}` : ""}${place.free ? "" : " crowded"}`}
        style={{ width: place.width - 2, minHeight: place.height - 2 }}
        data-testid={`edge-label-${id}`}
        data-whole={form.whole ? "true" : "false"}
        title={labelTitle(data, label)}
        onClick={(e) => {
          e.stopPropagation();
          selectEdge(id);
        }}
      >
        {form.lines.map((words, i) => (
          <div className="ac-edge-line" key={i}>
            {words.map((w, j) => (
              <Fragment key={j}>
                {j > 0 ? " " : ""}
                <span className={w.ix ? "ac-edge-ix" : "ac-edge-text"}>{w.text}</span>
              </Fragment>
            ))}
            {i === 0 && label.problems ? <ProblemCount count={label.problems} severity={label.severity} /> : null}
          </div>
        ))}
        {line ? <div className="ac-edge-counters">{line}</div> : null}
      </div>
    </div>
  );
});

/** ProblemCount: a problem badge's icon and count (a label's, an edge marker's). */
function ProblemCount({ count, severity }: { count: number; severity?: Severity }) {
  return (
    <span className={`ac-badge ac-badge-${severity ?? "error"} ac-problems`} aria-label={`${count} problem${count > 1 ? "s" : ""}`}>
      <Codicon name={SEVERITY_ICON[severity ?? "error"]} />
      {count}
    </span>
  );
}

/**
 * ProblemMarker is an edge's problems drawn on the edge itself: its severity's icon and count,
 * the messages on hover; a click selects the edge (the inspector lists them, each revealable).
 */
const ProblemMarker = memo(function ProblemMarker({ id, data, place }: { id: string; data: NonNullable<CanvasEdge["data"]>; place: PlacedLabel }) {
  const { selectEdge } = useContext(RunContext);
  const ds = data.diagnostics;
  return (
    <div className="ac-edge-anchor" style={{ left: place.x, top: place.y }}>
      <button
        type="button"
        className={`ac-marker ac-marker-${data.severity ?? "error"} nodrag nopan`}
        data-testid={`marker-${id}`}
        title={ds.map((d) => `${d.severity}: ${d.message}`).join("\n")}
        aria-label={`${ds.length} problem${ds.length > 1 ? "s" : ""} on edge ${data.id}`}
        onClick={(e) => {
          e.stopPropagation();
          selectEdge(id);
        }}
      >
        <Codicon name={SEVERITY_ICON[data.severity ?? "error"]} />
        {ds.length}
      </button>
    </div>
  );
});

/**
 * LabelLayer is the one layer the edges draw their labels into, in React Flow's label renderer
 * (above the edges, moving with the view). Made once: React Flow's EdgeLabelRenderer used in each
 * edge would look its layer up in the DOM on every store change, every frame of a pan.
 */
export const LabelLayer = memo(function LabelLayer({ onLayer }: { onLayer: (layer: HTMLElement | null) => void }) {
  return (
    <EdgeLabelRenderer>
      <div className="ac-label-layer" ref={onLayer} />
    </EdgeLabelRenderer>
  );
});

export const nodeTypes = { agent: AgentNode, system: SystemNodeView, missing: MissingNodeView };
export const edgeTypes = { interaction: InteractionEdge };
