// A side panel collapsed to its icon: a narrow strip at the canvas's side with one button that
// opens the panel again, so the canvas keeps the room and the panel stays one click away.
import { Codicon } from "./elements";

export function Rail(props: { side: "left" | "right"; icon: string; label: string; testId: string; onOpen: () => void }) {
  return (
    <aside className={`ac-rail ac-rail-${props.side}`} data-testid={props.testId}>
      <button type="button" className="ac-tool ac-rail-button" aria-label={props.label} title={props.label} onClick={props.onOpen}>
        <Codicon name={props.icon} />
      </button>
    </aside>
  );
}
