// Inline SVG icons (no remote assets; the CSP allows none). 16×16, drawn in currentColor.
import type { JSX } from "react";

const P = { fill: "none", stroke: "currentColor", strokeWidth: 1.4, strokeLinecap: "round", strokeLinejoin: "round" } as const;

const paths: Record<string, JSX.Element> = {
  agent: (
    <g {...P}>
      <rect x="3.5" y="5" width="9" height="7.5" rx="2" />
      <path d="M8 5V2.5M6 8.5h.01M10 8.5h.01M6.5 10.8h3" />
    </g>
  ),
  judge: (
    <g {...P}>
      <path d="M8 2v12M4.5 14h7M3 4.5h10M3 4.5 1.5 9h3L3 4.5zM13 4.5 11.5 9h3L13 4.5z" />
    </g>
  ),
  blackboard: (
    <g {...P}>
      <rect x="1.5" y="2.5" width="13" height="9" rx="1" />
      <path d="M4 6h5M4 8.5h7M5 11.5 4 14.5M11 11.5l1 3" />
    </g>
  ),
  router: (
    <g {...P}>
      <path d="M1.5 8h5M6.5 8l3-4h5M6.5 8h8M6.5 8l3 4h5M12.5 2l2 2-2 2M12.5 6l2 2-2 2M12.5 10l2 2-2 2" />
    </g>
  ),
  broker: (
    <g {...P}>
      <circle cx="8" cy="8" r="2.2" />
      <circle cx="2.8" cy="3.5" r="1.3" />
      <circle cx="13.2" cy="3.5" r="1.3" />
      <circle cx="8" cy="14" r="1.3" />
      <path d="M3.8 4.4 6.3 6.6M12.2 4.4 9.7 6.6M8 10.2v2.5" />
    </g>
  ),
  manager: (
    <g {...P}>
      <rect x="1.5" y="5" width="13" height="8.5" rx="1.2" />
      <path d="M5.5 5V3.3c0-.5.4-.8.8-.8h3.4c.4 0 .8.3.8.8V5M1.5 9h13" />
    </g>
  ),
  aggregator: (
    <g {...P}>
      <path d="M1.5 2.5h13L9.5 8.5v5l-3 1.5v-6.5z" />
    </g>
  ),
  curator: (
    <g {...P}>
      <path d="M4 1.8h8v12.4l-4-2.8-4 2.8z" />
      <path d="M6 5.5h4M6 8h4" />
    </g>
  ),
  bridge: (
    <g {...P}>
      <path d="M1 11.5h14M1 6.5h14M3 6.5v7M13 6.5v7M3 11.5c1.5-3 8.5-3 10 0" />
    </g>
  ),
  unknown: (
    <g {...P}>
      <rect x="2.5" y="2.5" width="11" height="11" rx="2" />
      <path d="M6.3 6.2a1.8 1.8 0 1 1 2.4 1.7c-.5.2-.7.6-.7 1.1M8 11h.01" />
    </g>
  ),
};

export function Icon({ name, title }: { name: string; title?: string }) {
  return (
    <svg className={`ac-icon ac-icon-${name in paths ? name : "unknown"}`} width="16" height="16" viewBox="0 0 16 16" aria-hidden={title ? undefined : true} role={title ? "img" : undefined}>
      {title ? <title>{title}</title> : null}
      {paths[name] ?? paths.unknown}
    </svg>
  );
}
