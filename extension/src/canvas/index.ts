// The canvas custom editor, for the extension's activate(): CanvasEditorProvider.register(context, backend).
export { CanvasEditorProvider, CANVAS_VIEW_TYPE } from "./provider";
export type { CanvasBackend, LspTextEdit } from "./backend";
export type * from "./protocol";
