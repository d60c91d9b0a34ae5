// The canvas webview's entry point.
import { createRoot } from "react-dom/client";
import "@xyflow/react/dist/base.css";
import "./canvas.css";
import { App } from "./App";

const root = document.getElementById("root");
if (root) createRoot(root).render(<App />);
