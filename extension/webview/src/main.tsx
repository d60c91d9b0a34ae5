// The canvas webview's entry point.
import { Component, type ReactNode } from "react";
import { createRoot } from "react-dom/client";
import "@xyflow/react/dist/base.css";
import "@vscode/codicons/dist/codicon.css";
import "./canvas.css";
import { App } from "./App";
import { post } from "./host";

// A render error shows itself and goes to the host's log instead of leaving a blank editor; the
// document is untouched (the webview never writes it), so reopening the editor recovers.
class ErrorBoundary extends Component<{ children: ReactNode }, { error?: Error }> {
  state: { error?: Error } = {};
  static getDerivedStateFromError(error: Error) {
    return { error };
  }
  componentDidCatch(error: Error) {
    post({ type: "error", message: `canvas crashed: ${error.message}\n${error.stack ?? ""}` });
  }
  render() {
    if (!this.state.error) return this.props.children;
    return (
      <div className="ac-banner ac-banner-error" role="alert">
        The canvas hit an error and stopped: {this.state.error.message}. The YAML is unchanged; reopen the editor to try again.
      </div>
    );
  }
}

const root = document.getElementById("root");
if (root)
  createRoot(root).render(
    <ErrorBoundary>
      <App />
    </ErrorBoundary>,
  );
