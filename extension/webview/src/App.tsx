// The canvas app. The model is the host's: every change goes out as edit operations and comes
// back as a new model; local state is only what the user is doing right now (a drag, a nudge,
// the selection, the viewport).
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import {
  applyEdgeChanges,
  applyNodeChanges,
  Background,
  BackgroundVariant,
  MiniMap,
  ReactFlow,
  ReactFlowProvider,
  useKeyPress,
  useReactFlow,
  useStore,
  type Connection,
  type EdgeChange,
  type FinalConnectionState,
  type NodeChange,
  type Viewport,
} from "@xyflow/react";
import type { Diagnostic, FlowModel, FlowOp, PatternInfo, Point } from "../../src/canvas/protocol";
import { nearestSpan } from "../../src/canvas/positions";
import { planConnect, planPick, planReconnect, type ConnectPlan } from "./connect";
import { syntaxError } from "./diagnostics";
import { drawEdges, ESTIMATED_METRICS, type LabelMetrics } from "./drawing";
import type { Rect } from "./edgeGeometry";
import { DrawnEdges } from "./drawnEdges";
import { DrawnEdgesContext, edgeTypes, HighlightContext, LabelLayer, LabelLayerContext, nodeTypes, RunContext } from "./elements";
import { findElement, isPlaceholder, layoutInput, NODE_HEIGHT, NODE_WIDTH, toGraph, type CanvasEdge, type CanvasNode } from "./graph";
import { loadState, onHostMessage, post, saveState } from "./host";
import { Inspector } from "./Inspector";
import { LABEL_MIN_ZOOM } from "./labels";
import { tidyLayout } from "./layout";
import { Legend } from "./Legend";
import { deleteOps, layoutOp, moveOps, nudge } from "./ops";
import { applyRunEvent, emptyOverlay, restoreAgentSpend, runLineChars } from "./overlay";
import { spendLabel } from "../../src/canvas/spend";
import { OffscreenMarkers } from "./Offscreen";
import { Palette, PATTERN_MIME } from "./Palette";
import { applyPalette } from "./colours";
import { Rail } from "./Rail";
import { PatternPicker, type PickerRequest } from "./PatternPicker";
import { BusyState, RoutingNote, Toolbar } from "./Toolbar";
import { measureLabels, readableZoom } from "./metrics";
import { labelRects, nodeRect, pane, storyRects } from "./opening";
import { fitAll, openingView } from "./view";
import { idRecord } from "./records";

export const GRID = 16;
const NUDGE_SETTLE_MS = 400;
/** Below this width the minimap starts hidden, as the side panels do: the graph keeps the room. */
export const MINIMAP_MIN_WIDTH = 900;
/** Below this editor width the palette and the inspector start collapsed to their icons. */
export const PANELS_MIN_WIDTH = 1400;
/** Flows with more interactions than this start with the legend hidden (its toggle shows it). */
export const LEGEND_MAX = 24;
/** Flows with more nodes than this draw only what is in view (React Flow's onlyRenderVisibleElements). */
export const BIG_FLOW = 150;


/** nodeAtPointer: the id of the node under a mouse or touch event's point, if any. */
function nodeAtPointer(e: MouseEvent | TouchEvent): string | undefined {
  const p = "changedTouches" in e ? e.changedTouches[0] : e;
  if (!p) return undefined;
  return document.elementFromPoint(p.clientX, p.clientY)?.closest<HTMLElement>(".react-flow__node")?.dataset.id;
}

function isTextField(t: EventTarget | null): boolean {
  const el = t as HTMLElement | null;
  if (!el || !el.tagName) return false;
  const tag = el.tagName;
  return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || el.isContentEditable;
}

// Canvas shortcuts act when focus is on the canvas (or nowhere), not in a panel's controls.
function onCanvas(t: EventTarget | null): boolean {
  const el = t as HTMLElement | null;
  if (!el || el === document.body || el === document.documentElement) return true;
  return !!el.closest?.(".react-flow") || el.classList?.contains("ac-canvas");
}

/**
 * tabStopInCard is where Tab goes inside a card: from the focused card to its Last turn button,
 * then to its Fork button, and with Shift back the same way to its card; null when Tab moves
 * between elements.
 */
function tabStopInCard(t: EventTarget | null, back: boolean): HTMLElement | null {
  const el = t as HTMLElement | null;
  if (!el?.classList) return null;
  if (!back && el.classList.contains("react-flow__node")) return el.querySelector<HTMLElement>(".ac-last-turn");
  if (!el.classList.contains("ac-last-turn")) return null;
  const sibling = (back ? el.previousElementSibling : el.nextElementSibling) as HTMLElement | null;
  if (sibling?.classList.contains("ac-last-turn")) return sibling;
  return back ? el.closest<HTMLElement>(".react-flow__node") : null;
}

/** useWindowWidth is the editor's width, followed as it is resized. */
function useWindowWidth(): number {
  const [w, setW] = useState(window.innerWidth);
  useEffect(() => {
    const on = () => setW(window.innerWidth);
    window.addEventListener("resize", on);
    return () => window.removeEventListener("resize", on);
  }, []);
  return w;
}

export function App() {
  return (
    <ReactFlowProvider>
      <Canvas />
    </ReactFlowProvider>
  );
}

function Canvas() {
  const rf = useReactFlow<CanvasNode, CanvasEdge>();
  const saved = useMemo(loadState, []);
  const [flow, setFlow] = useState<FlowModel | null>(null);
  const [diags, setDiags] = useState<Diagnostic[]>([]);
  const [syntax, setSyntax] = useState<Diagnostic>();
  const [notice, setNotice] = useState<string>();
  const [patterns, setPatterns] = useState<PatternInfo[]>([]);
  const [overlay, setOverlay] = useState(emptyOverlay);
  const [now, setNow] = useState(() => Date.now());
  const [snap, setSnap] = useState(saved.snap ?? false);
  // Below PANELS_MIN_WIDTH the side panels are collapsed to their icons, so the graph keeps the
  // room; once the person opens or collapses one, that choice is kept (webview state).
  const width = useWindowWidth();
  const [paletteChoice, setPaletteChoice] = useState(saved.palette);
  const [inspectorChoice, setInspectorChoice] = useState(saved.inspector);
  const paletteOpen = paletteChoice ?? width >= PANELS_MIN_WIDTH;
  const inspectorOpen = inspectorChoice ?? width >= PANELS_MIN_WIDTH;
  const setPaletteOpen = (open: boolean) => (setPaletteChoice(open), saveState({ palette: open }));
  const setInspectorOpen = (open: boolean) => (setInspectorChoice(open), saveState({ inspector: open }));
  const [minimap, setMinimap] = useState(saved.minimap ?? window.innerWidth >= MINIMAP_MIN_WIDTH);
  // The legend starts shown unless the flow has more interactions than it can list in a glance,
  // or the editor is as narrow as the minimap starts hidden in: the labels name the interactions.
  const [legendChoice, setLegend] = useState<boolean | undefined>(saved.legend);
  const legend = legendChoice ?? ((flow?.interactions?.length ?? 0) <= LEGEND_MAX && width >= MINIMAP_MIN_WIDTH);
  const [picker, setPicker] = useState<PickerRequest>();
  // The interaction hovered in the legend: its edges stand out.
  const [hovered, setHovered] = useState<string>();
  const [nodes, setNodes] = useState<CanvasNode[]>([]);
  const [edges, setEdges] = useState<CanvasEdge[]>([]);
  const busy = useMemo(() => new BusyState(), []);
  const [metrics, setMetrics] = useState<LabelMetrics>(ESTIMATED_METRICS);
  const metricsRef = useRef(metrics);
  metricsRef.current = metrics;
  const zoomedOut = useStore((s) => s.transform[2] < LABEL_MIN_ZOOM);
  // Whether the first view is set (restored, or the flow fitted): until then the zoom is not the
  // one the flow will be seen at, and a big flow's labels wait for it rather than be drawn for nothing.
  const [viewSet, setViewSet] = useState(false);
  const viewSetRef = useRef(viewSet);
  viewSetRef.current = viewSet;
  const [labelLayer, setLabelLayer] = useState<HTMLElement | null>(null);
  const wrapper = useRef<HTMLDivElement>(null);
  // While Space is held, a drag pans — over a node too: React Flow marks draggable nodes "nopan",
  // so they stop being draggable for as long as the key is down.
  const spaceDown = useKeyPress("Space");
  const first = useRef(true);
  const flowRef = useRef(flow);
  flowRef.current = flow;
  const nodesRef = useRef(nodes);
  nodesRef.current = nodes;
  const overlayRef = useRef(overlay);
  overlayRef.current = overlay;
  // Every edge's drawing (drawing.ts), kept outside React's props: each edge reads its own entry.
  const drawnEdges = useMemo(() => new DrawnEdges(), []);
  const edgesRef = useRef(edges);
  edgesRef.current = edges;
  const snapRef = useRef(snap);
  snapRef.current = snap;
  const patternsRef = useRef(patterns);
  patternsRef.current = patterns;
  // A connection drag: whether onConnect took it, and the edge whose end is being moved.
  const connected = useRef(false);
  const reconnecting = useRef<string | undefined>(undefined);
  // After a connection is sent, its new edge is selected when the model comes back with it.
  const pendingEdge = useRef<{ source: string; target: string; before: Set<string> } | undefined>(undefined);
  // Where focus goes back to when the pattern picker closes.
  const pickerReturn = useRef<HTMLElement | null>(null);
  const pendingNudge = useRef<{ positions: Record<string, Point>; timer?: ReturnType<typeof setTimeout> }>({ positions: {} });

  const send = useCallback((ops: FlowOp[], label?: string) => {
    if (ops.length) post({ type: "edit", ops, label });
  }, []);

  const reveal = useCallback((path: string) => {
    post({ type: "reveal", path, range: nearestSpan(flowRef.current?.spans, path) });
  }, []);

  // Messages from the host.
  useEffect(
    () =>
      onHostMessage((m) => {
        switch (m.type) {
          case "flow": {
            const err = syntaxError(m.flow, m.diagnostics);
            setSyntax(err);
            if (!err && m.flow) {
              setFlow(m.flow);
              setDiags(m.diagnostics ?? []);
            }
            setNotice(undefined);
            break;
          }
          case "patterns":
            setPatterns(m.patterns);
            break;
          case "runEvent":
            setOverlay((o) => applyRunEvent(o, m.event, flowRef.current));
            break;
          case "runSpend":
            setOverlay((o) => restoreAgentSpend(o, m.runId, m.agents));
            break;
          case "editFailed":
            pendingEdge.current = undefined;
            setNotice(m.message);
            break;
        }
      }),
    [],
  );
  useEffect(() => post({ type: "ready" }), []);
  // The interaction colours, chosen from the theme's (palette.ts), again when the theme changes.
  useEffect(() => applyPalette(document.documentElement), []);

  // The clock for the overlay's "time left", only while a run is on.
  useEffect(() => {
    if (!overlay.running) return;
    setNow(Date.now());
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [overlay.running]);

  // The model as a graph; selection and measured sizes carry over from the previous one.
  const graph = useMemo(() => (flow ? toGraph(flow, diags) : null), [flow, diags]);
  const graphRef = useRef(graph);
  graphRef.current = graph;

  // The first view and the view after Tidy: the whole flow when it is readable so, else its story
  // (the interaction that runs first) at the readable zoom, clear of the toolbar, legend and
  // minimap (view.ts). Fit shows everything, however small.
  const [openTick, setOpenTick] = useState(0);
  const openPending = useRef(false);
  const openSoon = useCallback(() => {
    openPending.current = true;
    setOpenTick((t) => t + 1);
  }, []);
  const content = useCallback((): Rect[] => [...nodesRef.current.map(nodeRect), ...labelRects(drawnEdges.all())], []); // eslint-disable-line react-hooks/exhaustive-deps
  const showStory = useCallback(() => {
    const p = pane(wrapper.current);
    if (!p) return;
    const story = storyRects(flowRef.current, nodesRef.current, edgesRef.current, drawnEdges.all());
    void rf.setViewport(openingView(content(), story, p, readableZoom(metricsRef.current)), { duration: 0 }).then(() => setViewSet(true));
  }, [rf, content]); // eslint-disable-line react-hooks/exhaustive-deps
  const fit = useCallback(() => {
    const p = pane(wrapper.current);
    if (p) void rf.setViewport(fitAll(content(), p), { duration: 0 });
  }, [rf, content]);
  // The label font, measured again with each new model (the theme's font may have changed).
  useEffect(() => {
    const m = measureLabels(wrapper.current?.querySelector(".ac-canvas") ?? null);
    metricsRef.current = m; // the first view, in this frame, needs it before the next render
    setMetrics(m);
  }, [flow]);
  useEffect(() => {
    if (!graph) return;
    const restoring = first.current;
    const keepNodes = new Set<string>(restoring ? saved.selection?.nodes ?? [] : nodesRef.current.filter((n) => n.selected).map((n) => n.id));
    let keepEdges = new Set(restoring ? saved.selection?.edges ?? [] : edgesRef.current.filter((e) => e.selected).map((e) => e.id));
    const pend = pendingEdge.current;
    const drawn = pend && graph.edges.find((e) => !pend.before.has(e.id) && e.source === pend.source && e.target === pend.target);
    if (drawn) {
      // The edge just drawn is selected, so the inspector shows it (its termination, its axes).
      pendingEdge.current = undefined;
      keepNodes.clear();
      keepEdges = new Set([drawn.id]);
    }
    const measured = new Map(nodesRef.current.map((n) => [n.id, n.measured]));
    const next = graph.nodes.map((n) => ({ ...n, selected: keepNodes.has(n.id), measured: measured.get(n.id) }) as CanvasNode);
    setNodes(next);
    setEdges(graph.edges.map((e) => ({ ...e, selected: keepEdges.has(e.id) })));
    if (restoring) {
      first.current = false;
      if (saved.viewport) {
        rf.setViewport(saved.viewport);
        setViewSet(true);
      } else if (next.length === 0) setViewSet(true);
      else openSoon();
    }
  }, [graph]); // eslint-disable-line react-hooks/exhaustive-deps

  const onNodesChange = useCallback((c: NodeChange<CanvasNode>[]) => setNodes((ns) => applyNodeChanges(c, ns)), []);
  const onEdgesChange = useCallback((c: EdgeChange<CanvasEdge>[]) => setEdges((es) => applyEdgeChanges(c, es)), []);

  const selNodes = nodes.filter((n) => n.selected);
  const selEdges = edges.filter((e) => e.selected);
  const selKey = selNodes.map((n) => n.id).join("\u0000") + "\u0001" + selEdges.map((e) => e.id).join("\u0000");
  useEffect(() => {
    if (!first.current) saveState({ selection: { nodes: selNodes.map((n) => n.id), edges: selEdges.map((e) => e.id) } });
  }, [selKey]); // eslint-disable-line react-hooks/exhaustive-deps

  const select = useCallback((kind: "node" | "edge", id: string) => {
    setNodes((ns) => ns.map((n) => (n.selected !== (kind === "node" && n.id === id) ? { ...n, selected: !n.selected } : n)));
    setEdges((es) => es.map((e) => (e.selected !== (kind === "edge" && e.id === id) ? { ...e, selected: !e.selected } : e)));
  }, []);
  const selectEdge = useCallback((id: string) => select("edge", id), [select]);

  const viewportCenter = useCallback((): Point => {
    const r = wrapper.current?.querySelector(".react-flow")?.getBoundingClientRect();
    if (!r) return { x: 0, y: 0 };
    const p = rf.screenToFlowPosition({ x: r.left + r.width / 2, y: r.top + r.height / 2 });
    return { x: Math.round(p.x), y: Math.round(p.y) };
  }, [rf]);

  const insertPattern = useCallback(
    (p: PatternInfo) => send([{ op: "insertPattern", patternId: p.patternId, position: viewportCenter() }], `Insert ${p.patternId}`),
    [send, viewportCenter],
  );

  // Connections: a drag between handles, the inspector's Connect, the picker.
  const runPlan = useCallback(
    (plan: ConnectPlan) => {
      switch (plan.kind) {
        case "refused":
          setNotice(plan.message);
          return;
        case "ops": {
          for (const o of plan.ops) {
            const e = o.op === "addEdge" ? o.edge : o.op === "addInteraction" ? o.interaction.edges[0] : undefined;
            if (e) pendingEdge.current = { source: e.source, target: e.target, before: new Set(edgesRef.current.map((x) => x.id)) };
          }
          setNotice(undefined);
          send(plan.ops, plan.label);
          return;
        }
        case "pick":
          pickerReturn.current = document.activeElement as HTMLElement | null;
          setPicker({ source: plan.source, target: plan.target, candidates: plan.candidates, note: plan.note });
          return;
      }
    },
    [send],
  );

  const connect = useCallback(
    (source: string, target: string, into?: string) => {
      if (flowRef.current) runPlan(planConnect(flowRef.current, patternsRef.current, source, target, into));
    },
    [runPlan],
  );

  const reconnect = useCallback(
    (edgeId: string, source: string, target: string) => {
      if (!flowRef.current) return;
      const plan = planReconnect(flowRef.current, patternsRef.current, edgeId, source, target);
      if (plan.kind === "refused") setNotice(plan.message);
      else if (plan.kind === "ops") send(plan.ops, plan.label);
    },
    [send],
  );

  const closePicker = useCallback(() => {
    setPicker(undefined);
    const back = pickerReturn.current;
    pickerReturn.current = null;
    requestAnimationFrame(() => (back && back.isConnected ? back : wrapper.current?.querySelector<HTMLElement>(".react-flow"))?.focus({ preventScroll: true }));
  }, []);

  // The interaction a drawn edge joins when the user has selected one (edges of one interaction only).
  const selectedInteraction = (): string | undefined => {
    if (nodesRef.current.some((n) => n.selected)) return undefined;
    const ids = new Set(edgesRef.current.filter((e) => e.selected).map((e) => e.data?.interactionId));
    return ids.size === 1 ? [...ids][0] : undefined;
  };

  const onConnect = (c: Connection) => {
    connected.current = true;
    connect(c.source, c.target, selectedInteraction());
  };

  const onReconnect = (old: CanvasEdge, c: Connection) => {
    connected.current = true;
    reconnect(old.id, c.source, c.target);
  };

  // A drag that did not end on a valid handle: dropped on a node's body (people aim for the
  // node, not its small handle), or on the node it started from (a self-loop, refused with a
  // message rather than silently).
  const onConnectEnd = (event: MouseEvent | TouchEvent, state: FinalConnectionState) => {
    const done = connected.current;
    const edgeId = reconnecting.current;
    connected.current = false;
    reconnecting.current = undefined;
    if (done || !state.fromNode || !state.fromHandle) return;
    const over = state.toNode?.id ?? nodeAtPointer(event);
    if (!over) return; // dropped on the empty canvas: nothing to do
    // fromHandle is where the drag started (for a reconnect, the end that stays put).
    const [source, target] = state.fromHandle.type === "source" ? [state.fromNode.id, over] : [over, state.fromNode.id];
    if (edgeId) reconnect(edgeId, source, target);
    else connect(source, target, selectedInteraction());
  };

  const toggleMinimap = useCallback(() => {
    setMinimap((m) => {
      saveState({ minimap: !m });
      return !m;
    });
  }, []);

  const tidy = useCallback(async () => {
    const f = flowRef.current;
    const g = graphRef.current;
    const ns = nodesRef.current;
    if (!f || !g || ns.length === 0) return;
    let shown = -1;
    const progress = (fraction: number) => {
      // a tenth at a time: each update re-renders the toolbar
      const step = Math.floor(fraction * 10);
      if (step !== shown) busy.set({ label: "Tidying…", fraction: (shown = step) / 10 });
    };
    // Each stage marked, for the benchmark (npm run bench:webview) to say where the time goes.
    performance.mark("ac:tidy:start");
    progress(0);
    try {
      const sizes = new Map(ns.map((n) => [n.id, nodeRect(n)]));
      const positions = await tidyLayout(layoutInput(f, g.diagnostics, (id) => sizes.get(id)), progress);
      const saved = idRecord(Object.fromEntries(Object.entries(positions).filter(([id]) => !isPlaceholder(id))));
      performance.mark("ac:tidy:reply");
      setNodes((cur) => cur.map((n) => (positions[n.id] ? { ...n, position: positions[n.id] } : n)));
      send([layoutOp(saved)], "Tidy");
      performance.mark("ac:tidy:sent");
      openSoon();
    } catch (e) {
      setNotice(`Tidy failed: ${(e as Error).message}`);
      post({ type: "error", message: `tidy: ${(e as Error).message}` });
    } finally {
      busy.set(undefined);
    }
  }, [busy, openSoon, send]);

  /**
   * withAutoPlaced adds to moved positions those of the nodes the layout placed (no saved
   * position yet): the first move writes them all, so nothing else shifts when the flow reloads.
   */
  const withAutoPlaced = useCallback((moved: Record<string, Point>): Record<string, Point> => {
    const all = idRecord<Point>();
    for (const n of nodesRef.current) if (n.data.auto && !isPlaceholder(n.id)) all[n.id] = n.position;
    return Object.assign(all, moved);
  }, []);

  const toggleLegend = useCallback(() => {
    saveState({ legend: !legend });
    setLegend(!legend);
  }, [legend]);

  const toggleSnap = useCallback(() => {
    setSnap((s) => {
      saveState({ snap: !s });
      return !s;
    });
  }, []);

  // Keyboard (extension/webview/README.md, Keyboard). Listening on document, before VS Code's own forwarding listener on
  // window, so a key the canvas handles does not also run a workbench keybinding.
  useEffect(() => {
    const flushNudge = () => {
      const p = pendingNudge.current;
      if (p.timer) clearTimeout(p.timer);
      const positions = p.positions;
      pendingNudge.current = { positions: {} };
      send(moveOps(withAutoPlaced(positions)), "Move");
    };
    const handler = (e: KeyboardEvent) => {
      const mod = e.ctrlKey || e.metaKey;
      const key = e.key;
      const consume = () => {
        e.preventDefault();
        e.stopPropagation();
      };
      if (mod && !e.altKey && (key === "z" || key === "Z" || key === "y" || key === "Y")) {
        consume();
        post({ type: (key === "y" || key === "Y" || e.shiftKey) ? "redo" : "undo" });
        return;
      }
      if (isTextField(e.target)) return;
      if (e.shiftKey && !mod && !e.altKey && (key === "S" || key === "s")) {
        consume();
        toggleSnap();
        return;
      }
      if (!onCanvas(e.target) || mod || e.altKey) return;
      switch (key) {
        case "Tab": {
          // A card's own button (Last turn) is the stop between the card and the next element.
          const stop = tabStopInCard(e.target, e.shiftKey);
          if (stop) {
            consume();
            stop.focus({ preventScroll: true });
            return;
          }
          const order: Array<{ kind: "node" | "edge"; id: string }> = [
            ...nodesRef.current.map((n) => ({ kind: "node" as const, id: n.id })),
            ...edgesRef.current.map((x) => ({ kind: "edge" as const, id: x.id })),
          ];
          if (order.length === 0) return;
          consume();
          const cur = order.findIndex((o) =>
            o.kind === "node" ? nodesRef.current.find((n) => n.id === o.id)?.selected : edgesRef.current.find((x) => x.id === o.id)?.selected,
          );
          const next = order[cur < 0 ? (e.shiftKey ? order.length - 1 : 0) : (cur + (e.shiftKey ? -1 : 1) + order.length) % order.length];
          select(next.kind, next.id);
          if (next.kind === "node") {
            const n = rf.getInternalNode(next.id);
            if (n) {
              const { x, y, zoom } = rf.getViewport();
              const r = wrapper.current?.querySelector(".react-flow")?.getBoundingClientRect();
              const p = n.internals.positionAbsolute;
              const w = n.measured.width ?? NODE_WIDTH;
              const h = n.measured.height ?? NODE_HEIGHT;
              const sx = p.x * zoom + x;
              const sy = p.y * zoom + y;
              if (r && (sx < 0 || sy < 0 || sx + w * zoom > r.width || sy + h * zoom > r.height)) {
                rf.setCenter(p.x + w / 2, p.y + h / 2, { zoom });
              }
            }
          }
          requestAnimationFrame(() => {
            const el = document.querySelector<HTMLElement>(`[data-testid="rf__${next.kind}-${CSS.escape(next.id)}"]`);
            el?.focus({ preventScroll: true });
          });
          return;
        }
        case "+":
        case "=":
          consume();
          rf.zoomIn({ duration: 0 });
          return;
        case "-":
        case "_":
          consume();
          rf.zoomOut({ duration: 0 });
          return;
        case "0":
          consume();
          fit();
          return;
        case "1":
          consume();
          rf.zoomTo(1, { duration: 0 });
          return;
        case "m":
        case "M":
          if (e.shiftKey) return;
          consume();
          toggleMinimap();
          return;
        case "Delete":
        case "Backspace": {
          const ns = nodesRef.current.filter((n) => n.selected).map((n) => n.id);
          const es = edgesRef.current.filter((x) => x.selected);
          if (ns.length + es.length === 0) return;
          consume();
          send(deleteOps(ns, es), "Delete");
          return;
        }
        case "Escape":
          consume();
          setNodes((ns) => ns.map((n) => (n.selected ? { ...n, selected: false } : n)));
          setEdges((es) => es.map((x) => (x.selected ? { ...x, selected: false } : x)));
          return;
        case "ArrowLeft":
        case "ArrowRight":
        case "ArrowUp":
        case "ArrowDown": {
          const sel = nodesRef.current.filter((n) => n.selected);
          if (sel.length === 0) return;
          consume();
          const step = e.shiftKey ? 10 : 1;
          const dx = key === "ArrowLeft" ? -step : key === "ArrowRight" ? step : 0;
          const dy = key === "ArrowUp" ? -step : key === "ArrowDown" ? step : 0;
          const from = idRecord<Point>();
          for (const n of sel) from[n.id] = n.position;
          const moved = nudge(from, dx, dy, snapRef.current ? GRID : undefined);
          setNodes((ns) => ns.map((n) => (moved[n.id] ? { ...n, position: moved[n.id] } : n)));
          const p = pendingNudge.current;
          Object.assign(p.positions, moved);
          if (p.timer) clearTimeout(p.timer);
          p.timer = setTimeout(flushNudge, NUDGE_SETTLE_MS);
          return;
        }
      }
    };
    document.addEventListener("keydown", handler);
    return () => document.removeEventListener("keydown", handler);
  }, [rf, select, send, toggleSnap, toggleMinimap, fit, withAutoPlaced]);

  const selected = selNodes.length + selEdges.length === 1 ? findElement(flow, selNodes[0] ? { kind: "node", id: selNodes[0].id } : { kind: "edge", id: selEdges[0].id }) : undefined;
  const selectedDiags = selNodes[0]
    ? (graph?.diagnostics.nodes.get(selNodes[0].id) ?? [])
    : selEdges[0]
      ? (graph?.diagnostics.edges.get(selEdges[0].id) ?? [])
      : [];
  const flowDiags = graph?.diagnostics.flow ?? [];
  const ctx = useMemo(() => ({ overlay, now, selectEdge }), [overlay, now, selectEdge]);
  const big = nodes.length > BIG_FLOW;
  // A big flow zoomed out too far to read its labels draws (and places) none (LABEL_MIN_ZOOM).
  const labelsDrawn = !big || (viewSet && !zoomedOut);

  // Every edge's curve and its label's place, computed together so labels keep clear of the
  // nodes and of each other. A label's size: its (shortened) text and problem badge on one line,
  // the run counters on a second, the selected edge's first problem on a third.
  // Recomputed when what it depends on changes, not with every new nodes array (a selection,
  // a measurement that came out the same).
  // The room each label keeps for its interaction's run line: its size holds still for the run.
  const runChars = Object.keys(overlay.interactions).map((id) => `${id}:${runLineChars(overlay, id)}`).join(",");
  const shapes =
    nodes.map((n) => `${n.id}:${n.position.x},${n.position.y},${n.measured?.width ?? "-"},${n.measured?.height ?? "-"}`).join("|") +
    "#" +
    edges.map((e) => `${e.id}:${e.source}>${e.target}:${e.data?.label}:${e.data?.parallel}/${e.data?.parallelCount}:${e.data?.labelledBy}:${e.data?.diagnostics.length}`).join("|");
  const [drawn, routing] = useMemo(() => {
    const o = overlayRef.current;
    const d = drawEdges({
      rects: new Map(nodes.map((n) => [n.id, nodeRect(n)])),
      edges,
      metrics,
      labels: labelsDrawn,
      runChars: (id) => (o.interactions[id] ? runLineChars(o, id) : 0),
      clock: () => performance.now(),
    });
    return [d.edges, d.routing] as const;
  }, [shapes, metrics, runChars, labelsDrawn]); // eslint-disable-line react-hooks/exhaustive-deps
  useLayoutEffect(() => drawnEdges.set(drawn), [drawn, drawnEdges]);
  // The first view (and the view after Tidy), once the nodes are measured and the labels placed
  // with their real sizes: a big flow's nodes out of view are never measured, so it goes at once.
  useEffect(() => {
    if (!openPending.current) return;
    if (!big && nodes.some((n) => !n.measured?.width)) return;
    openPending.current = false;
    showStory();
  }, [drawn, openTick]); // eslint-disable-line react-hooks/exhaustive-deps
  // The interaction whose edges are all the selection (the legend marks it).
  const selectedIx = selNodes.length === 0 && selEdges.length > 0 && selEdges.every((e) => e.data?.interactionId === selEdges[0].data?.interactionId) ? selEdges[0].data?.interactionId : undefined;
  const selectInteraction = useCallback((interactionId: string) => {
    setNodes((ns) => ns.map((n) => (n.selected ? { ...n, selected: false } : n)));
    setEdges((es) => es.map((e) => (e.selected !== (e.data?.interactionId === interactionId) ? { ...e, selected: !e.selected } : e)));
  }, []);

  // What a screen reader announces when the selection changes (Tab, clicks).
  const announce =
    selNodes.length + selEdges.length === 0
      ? ""
      : selNodes.length + selEdges.length > 1
        ? `${selNodes.length + selEdges.length} selected`
        : selNodes[0]
          ? (selNodes[0].ariaLabel ?? selNodes[0].id)
          : (selEdges[0].ariaLabel ?? selEdges[0].id);

  return (
    <div className="ac-root" ref={wrapper}>
      <div className="ac-visually-hidden" aria-live="polite" data-testid="announce">
        {announce}
      </div>
      {syntax ? (
        <div className="ac-banner ac-banner-error" role="alert" data-testid="syntax-banner">
          <button type="button" className="ac-link" onClick={() => reveal(syntax.path ?? "")}>
            {flow ? "The YAML has an error; showing the last good graph." : "The YAML has an error."} Line {syntax.range.start.line}: {syntax.message}
          </button>
        </div>
      ) : null}
      {notice ? (
        <div className="ac-banner ac-banner-warning" role="alert">
          {notice}
          <button type="button" className="ac-icon-button" aria-label="Dismiss" onClick={() => setNotice(undefined)}>
            ×
          </button>
        </div>
      ) : null}
      {flowDiags.length > 0 ? (
        <details className="ac-banner ac-banner-problems" data-testid="flow-problems">
          <summary>
            {flowDiags.length} problem{flowDiags.length > 1 ? "s" : ""} in the file
          </summary>
          <ul>
            {flowDiags.map((d, i) => (
              <li key={i} className={`ac-diag ac-diag-${d.severity}`}>
                <button type="button" className="ac-link" onClick={() => reveal(d.path ?? "")}>
                  Line {d.range.start.line}: {d.message}
                </button>
              </li>
            ))}
          </ul>
        </details>
      ) : null}
      <div className="ac-main">
        {paletteOpen ? (
          <Palette patterns={patterns} onInsert={insertPattern} onClose={() => setPaletteOpen(false)} />
        ) : (
          <Rail side="left" icon="symbol-structure" label="Show the patterns" testId="palette-rail" onOpen={() => setPaletteOpen(true)} />
        )}
        <div
          className={`ac-canvas${spaceDown ? " panning" : ""}${hovered ? " ac-highlighting" : ""}`}
          onDragOver={(e) => {
            if (e.dataTransfer.types.includes(PATTERN_MIME)) {
              e.preventDefault();
              e.dataTransfer.dropEffect = "copy";
            }
          }}
          onDrop={(e) => {
            const patternId = e.dataTransfer.getData(PATTERN_MIME);
            if (!patternId) return;
            e.preventDefault();
            const p = rf.screenToFlowPosition({ x: e.clientX, y: e.clientY });
            send([{ op: "insertPattern", patternId, position: { x: Math.round(p.x), y: Math.round(p.y) } }], `Insert ${patternId}`);
          }}
          // set once the first view is (restored, or the flow opened on its story): what the tests wait for
          data-opened={viewSet ? "true" : undefined}
          aria-label={`Flow ${flow?.name ?? ""} canvas`} role="application" aria-roledescription="flow canvas">
          <Toolbar
            busy={busy}
            snap={snap}
            minimap={minimap}
            legend={legend}
            onTidy={tidy}
            onFit={fit}
            onSnap={toggleSnap}
            onMinimap={toggleMinimap}
            onLegend={toggleLegend}
            run={
              <>
                <RoutingNote routing={routing} />
                {overlay.running ? <span className="ac-badge ac-run-badge active">run {overlay.runId ?? ""}</span> : null}
                {spendLabel(overlay.spend) ? (
                  <span className="ac-badge ac-spend-badge" title="What the run's agents reported spending so far (docs/runs.md, Spend limits)">
                    {spendLabel(overlay.spend)}
                  </span>
                ) : null}
              </>
            }
          />
          <div className="ac-stage">
          <div className="ac-flow">
          <RunContext.Provider value={ctx}>
           <HighlightContext.Provider value={hovered}>
           <DrawnEdgesContext.Provider value={drawnEdges}>
           <LabelLayerContext.Provider value={labelsDrawn ? labelLayer : null}>
            <ReactFlow<CanvasNode, CanvasEdge>
              nodes={nodes}
              edges={edges}
              nodeTypes={nodeTypes}
              edgeTypes={edgeTypes}
              onNodesChange={onNodesChange}
              onEdgesChange={onEdgesChange}
              onNodeDragStop={(_, __, dragged) => {
                const pos = idRecord<Point>();
                for (const n of dragged) pos[n.id] = n.position;
                send(moveOps(withAutoPlaced(pos)), "Move");
              }}
              onMoveEnd={(_, vp: Viewport) => (saveState({ viewport: vp }), setViewSet(true))}
              onConnectStart={() => (connected.current = false)}
              onConnect={onConnect}
              onConnectEnd={onConnectEnd}
              onReconnectStart={(_, edge) => (reconnecting.current = edge.id)}
              onReconnect={onReconnect}
              edgesReconnectable
              // A self-loop shows as invalid while dragging; onConnectEnd says why.
              isValidConnection={(c) => c.source !== c.target}
              // Clicking a handle selects its node; connecting is by dragging (or the inspector).
              connectOnClick={false}
              nodesDraggable={!spaceDown}
              deleteKeyCode={null}
              selectionKeyCode={null}
              multiSelectionKeyCode={["Meta", "Control", "Shift"]}
              panActivationKeyCode="Space"
              disableKeyboardA11y
              snapToGrid={snap}
              snapGrid={[GRID, GRID]}
              minZoom={0.05}
              maxZoom={4}
              onlyRenderVisibleElements={big}
              proOptions={{ hideAttribution: true }}
              zoomOnDoubleClick={false}
            >
              <Background variant={snap ? BackgroundVariant.Lines : BackgroundVariant.Dots} gap={GRID} />
              <LabelLayer onLayer={setLabelLayer} />
            </ReactFlow>
           </LabelLayerContext.Provider>
           </DrawnEdgesContext.Provider>
           </HighlightContext.Provider>
          </RunContext.Provider>
          {/* without the minimap, what is off-screen is counted at the flow's edges */}
          {!minimap && viewSet ? <OffscreenMarkers boxes={nodes.map(nodeRect)} /> : null}
          {flow && nodes.length === 0 ? <div className="ac-empty">This flow has no nodes yet. Insert a pattern from the palette.</div> : null}
          {!flow && !syntax ? <div className="ac-empty">Loading the flow…</div> : null}
          </div>
          {/* The legend and the minimap beside the flow, never over it: no card or label is ever under them. */}
          {(legend && flow && (flow.interactions?.length ?? 0) > 0) || minimap ? (
            <aside className="ac-side" data-testid="side">
              {legend && flow ? <Legend interactions={flow.interactions ?? []} selected={selectedIx} onSelect={selectInteraction} onHover={setHovered} /> : null}
              {minimap ? (
                  <MiniMap<CanvasNode>
                    pannable
                    zoomable
                    ariaLabel="Minimap of the flow"
                    // Colours come from canvas.css (--xy-minimap-* pointed at --vscode-*); classes say what to colour.
                    nodeClassName={(n) => ["ac-mini", `ac-mini-${n.type}`, n.data.severity ? `has-${n.data.severity}` : ""].join(" ")}
                    nodeBorderRadius={6}
                  />
              ) : null}
            </aside>
          ) : null}
          </div>
        </div>
        {inspectorOpen ? (
          <Inspector
            flow={flow}
            selected={selected}
            count={selNodes.length + selEdges.length}
            diagnostics={selectedDiags}
            patterns={patterns}
            send={send}
            reveal={reveal}
            connect={connect}
            reconnect={reconnect}
            onClose={() => setInspectorOpen(false)}
          />
        ) : (
          <Rail side="right" icon="layout-sidebar-right" label="Show the inspector" testId="inspector-rail" onOpen={() => setInspectorOpen(true)} />
        )}
      </div>
      {picker ? (
        <PatternPicker
          request={picker}
          patterns={patterns}
          onPick={(p) => {
            closePicker();
            if (flowRef.current) runPlan(planPick(flowRef.current, p, picker.source, picker.target));
          }}
          onJoin={(id) => {
            closePicker();
            connect(picker.source, picker.target, id);
          }}
          onCancel={closePicker}
        />
      ) : null}
    </div>
  );
}
