// The canvas's node and edge components. The run overlay comes through a context so a run
// event re-renders only the elements, never rebuilds the graph.
import { createContext, memo, useContext } from "react";
import { BaseEdge, EdgeLabelRenderer, getBezierPath, Handle, Position, type EdgeProps, type NodeProps } from "@xyflow/react";
import type { Diagnostic } from "../../src/canvas/protocol";
import type { AgentNodeData, CanvasEdge, SystemNodeData } from "./graph";
import { Icon } from "./icons";
import { edgeCounters, emptyOverlay, type RunOverlay } from "./overlay";

export interface CanvasContextValue {
  overlay: RunOverlay;
  now: number;
  selectEdge: (id: string) => void;
}
export const RunContext = createContext<CanvasContextValue>({ overlay: emptyOverlay, now: 0, selectEdge: () => undefined });

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

function RunBadge({ id }: { id: string }) {
  const { overlay } = useContext(RunContext);
  const r = overlay.nodes[id];
  if (!r) return null;
  return (
    <>
      <span className={`ac-badge ac-run-badge${r.active ? " active" : ""}`} title="messages sent in this run">
        {r.active ? "● " : ""}
        {r.messages} msg
      </span>
      <ConflictBadge conflicts={r.conflicts} />
    </>
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

function nodeClass(kind: string, severity: string | undefined, active: boolean, selected: boolean): string {
  return ["ac-node", `ac-node-${kind}`, severity ? `has-${severity}` : "", active ? "run-active" : "", selected ? "selected" : ""]
    .filter(Boolean)
    .join(" ");
}

export const AgentNode = memo(function AgentNode({ data, selected }: NodeProps & { data: AgentNodeData }) {
  const { overlay } = useContext(RunContext);
  const active = !!overlay.nodes[data.id]?.active;
  return (
    <div className={nodeClass("agent", data.severity, active, !!selected)} data-testid={`node-${data.id}`}>
      <Handle type="target" position={Position.Left} aria-label={`Drop an edge here to connect it to ${data.name}`} />
      <div className="ac-node-head">
        <Icon name="agent" />
        <span className="ac-node-name">{data.name}</span>
        {data.diagnostics.length > 0 ? (
          <span className={`ac-badge ac-badge-${data.severity}`} aria-label={`${data.diagnostics.length} problems`}>
            {data.diagnostics.length}
          </span>
        ) : null}
      </div>
      <div className="ac-node-meta">
        <span className="ac-role">{data.role || "no role"}</span>
        <span className="ac-badge ac-backend" title="backend">
          {data.backend}
        </span>
        <RunBadge id={data.id} />
      </div>
      <DiagnosticList ds={data.diagnostics} />
      <Handle type="source" position={Position.Right} aria-label={`Drag from here to connect ${data.name} to another node`} />
    </div>
  );
});

export const SystemNodeView = memo(function SystemNodeView({ data, selected }: NodeProps & { data: SystemNodeData }) {
  const { overlay } = useContext(RunContext);
  const active = !!overlay.nodes[data.id]?.active;
  return (
    <div className={`${nodeClass("system", data.severity, active, !!selected)} ac-sys-${data.sysType}`} data-testid={`node-${data.id}`}>
      <Handle type="target" position={Position.Left} aria-label={`Drop an edge here to connect it to ${data.name}`} />
      <div className="ac-node-head">
        <Icon name={data.sysType} title={data.sysType} />
        <span className="ac-node-name">{data.name}</span>
        {data.diagnostics.length > 0 ? (
          <span className={`ac-badge ac-badge-${data.severity}`} aria-label={`${data.diagnostics.length} problems`}>
            {data.diagnostics.length}
          </span>
        ) : null}
      </div>
      <div className="ac-node-meta">
        <span className="ac-badge ac-systype">{data.sysType.toUpperCase()}</span>
        {data.llm ? <span className="ac-badge ac-llm">LLM</span> : null}
        <RunBadge id={data.id} />
      </div>
      <DiagnosticList ds={data.diagnostics} />
      <Handle type="source" position={Position.Right} aria-label={`Drag from here to connect ${data.name} to another node`} />
    </div>
  );
});

export const InteractionEdge = memo(function InteractionEdge(props: EdgeProps<CanvasEdge>) {
  const { id, sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition, data, selected, markerEnd } = props;
  const { overlay, now, selectEdge } = useContext(RunContext);
  const [path, lx, ly] = getBezierPath({ sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition });
  const run = overlay.edges[id];
  const counters = edgeCounters(run, now);
  const offset = (data?.parallel ?? 0) * 22;
  const cls = ["ac-edge", data?.severity ? `has-${data.severity}` : "", run?.active ? "run-active" : "", selected ? "selected" : ""]
    .filter(Boolean)
    .join(" ");
  const ds = data?.diagnostics ?? [];
  return (
    <>
      <BaseEdge id={id} path={path} markerEnd={markerEnd} className={cls} interactionWidth={16} />
      <EdgeLabelRenderer>
        <div
          className={`ac-edge-label nodrag nopan ${cls}`}
          data-testid={`edge-label-${id}`}
          style={{ transform: `translate(-50%, -50%) translate(${lx}px,${ly + offset}px)` }}
          title={ds.map((d) => `${d.severity}: ${d.message}`).join("\n") || undefined}
          onClick={(e) => {
            e.stopPropagation();
            selectEdge(id);
          }}
        >
          <span className="ac-edge-text">{data?.label}</span>
          {ds.length > 0 ? <span className={`ac-badge ac-badge-${data?.severity}`}>{ds.length}</span> : null}
          {counters ? <span className="ac-edge-counters">{counters}</span> : null}
          {ds.length > 0 && selected ? <div className={`ac-diag ac-diag-${ds[0].severity}`}>{ds[0].message}</div> : null}
        </div>
      </EdgeLabelRenderer>
    </>
  );
});

export const nodeTypes = { agent: AgentNode, system: SystemNodeView };
export const edgeTypes = { interaction: InteractionEdge };
