// What is off-screen, at the edge, when the minimap is hidden: at the middle of each side of the
// flow, how many cards lie wholly beyond it (a chevron and a count), a click panning that way.
// They sit in the margin the view keeps from the canvas's edges (view.ts: MARGIN), so the opening
// view never has a card under them.
import { useReactFlow, useStore } from "@xyflow/react";
import type { Rect } from "./edgeGeometry";
import { Codicon } from "./elements";
import { beyond, type Side } from "./view";

const ICON: Record<Side, string> = { top: "chevron-up", right: "chevron-right", bottom: "chevron-down", left: "chevron-left" };
const WORD: Record<Side, string> = { top: "above", right: "to the right", bottom: "below", left: "to the left" };

export function OffscreenMarkers({ boxes }: { boxes: Rect[] }) {
  const rf = useReactFlow();
  const [x, y, zoom] = useStore((s) => s.transform);
  const width = useStore((s) => s.width);
  const height = useStore((s) => s.height);
  if (!width || !height || boxes.length === 0) return null;
  const view = { x: -x / zoom, y: -y / zoom, width: width / zoom, height: height / zoom };
  const counts = beyond(boxes, view);
  const pan = (side: Side) => {
    const dx = side === "left" ? 0.7 * width : side === "right" ? -0.7 * width : 0;
    const dy = side === "top" ? 0.7 * height : side === "bottom" ? -0.7 * height : 0;
    void rf.setViewport({ x: x + dx, y: y + dy, zoom }, { duration: 0 });
  };
  return (
    <div className="ac-offscreen-layer" data-testid="offscreen">
      {(Object.keys(counts) as Side[])
        .filter((s) => counts[s] > 0)
        .map((s) => (
          <button
            key={s}
            type="button"
            className={`ac-offscreen ac-offscreen-${s}`}
            title={`${counts[s]} card${counts[s] > 1 ? "s" : ""} ${WORD[s]}: show them`}
            aria-label={`${counts[s]} card${counts[s] > 1 ? "s" : ""} ${WORD[s]}`}
            onClick={() => pan(s)}
          >
            <Codicon name={ICON[s]} />
            {counts[s]}
          </button>
        ))}
    </div>
  );
}
