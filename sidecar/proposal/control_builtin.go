package proposal

// builtinControl is the list a workspace adds to (WorkspaceControlFile); nothing takes from it.
// Patterns follow .gitignore: without a slash a name at any depth, a trailing slash a folder
// and everything in it, a slash inside anchors at the workspace root. Compared as file
// systems compare names (safepath.Fold). What it holds is what runs, or decides what runs,
// without the person naming it: on opening the folder, entering it in a shell, a push, an
// install, a build, the start of an interpreter or a test runner. Ordinary source and test
// files are not on it: reading them is what the review is for.
var builtinControl = []controlGroup{
	{"editor configuration: tasks can run when the folder is opened", []string{
		".vscode/", "*.code-workspace", ".idea/", ".devcontainer/", ".devcontainer.json", ".fleet/", ".zed/"}},
	{"CI configuration: runs on a push or a pull request", []string{
		".github/", ".gitlab-ci.yml", ".gitlab/", ".circleci/", ".travis.yml", "azure-pipelines.yml",
		".azure-pipelines/", "Jenkinsfile", ".buildkite/", ".drone.yml", "bitbucket-pipelines.yml",
		".woodpecker.yml", ".woodpecker/", "appveyor.yml", ".appveyor.yml", "cloudbuild.yaml",
		"cloudbuild.yml", ".gitpod.yml", ".forgejo/", ".gitea/",
		"netlify.toml", "vercel.json", "render.yaml", "fly.toml", "Procfile"}},
	{"sets the environment of a shell or tool that enters the folder", []string{
		".envrc", ".env", ".env.local", ".env.*.local", ".env.development", ".env.production", ".env.test",
		"mise.toml", ".mise.toml", ".tool-versions"}},
	{"picks the interpreter or compiler that runs (a version manager or rustup reads it)", []string{
		".nvmrc", ".node-version", ".python-version", ".ruby-version", ".go-version", ".java-version",
		".sdkmanrc", "rust-toolchain", "rust-toolchain.toml"}},
	{"what an agent is told or may do: its instructions, tools and permissions", []string{
		".mcp.json", ".claude/", ".codex/", ".gemini/", ".cursor/", ".continue/", "CLAUDE.md",
		"CLAUDE.local.md", "AGENTS.md", "GEMINI.md", ".cursorrules", ".windsurfrules", ".aider.conf.yml"}},
	{"AgentCanvas's own state and flows", []string{".agentcanvas/"}},
	{"git hooks, filters or configuration: run by git itself", []string{
		".git/", ".gitattributes", ".gitmodules", ".githooks/", ".husky/", "lefthook.yml",
		"lefthook.yaml", ".lefthook.yml", ".pre-commit-config.yaml", ".lfsconfig", ".gitconfig"}},
	{"package manager configuration: runs code on install or build", []string{
		".npmrc", ".yarnrc", ".yarnrc.yml", ".yarn/", ".pnpmfile.cjs", "pnpm-workspace.yaml",
		"package.yaml", "package.json5", "bunfig.toml", ".bunfig.toml", "deno.json", "deno.jsonc",
		"composer.json", "Gemfile", ".bundle/", "pyproject.toml", "setup.py", "setup.cfg", "Pipfile",
		"uv.toml", "pip.conf", "Cargo.toml", "build.rs", ".cargo/", "go.work"}},
	{"Python runs it by itself: when it starts, or when pytest collects the tests", []string{
		"conftest.py", "sitecustomize.py", "usercustomize.py", "*.pth", "pytest.ini"}},
	{"a tool's configuration written as code: it runs when the tool, or the editor's extension for it, starts", []string{
		"*.config.js", "*.config.cjs", "*.config.mjs", "*.config.ts", "*.config.cts", "*.config.mts",
		".*rc.js", ".*rc.cjs", ".*rc.mjs", ".*rc.ts", ".*rc.cts", ".*rc.mts"}},
	{"a build script that a person or CI runs", []string{
		"Makefile", "GNUmakefile", "*.mk", "justfile", ".justfile", "Taskfile.yml", "Taskfile.yaml",
		"Rakefile", "build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts",
		"gradlew", "gradle/wrapper/", "mvnw", ".mvn/", "pom.xml", "tox.ini", "noxfile.py",
		"CMakeLists.txt", "*.cmake", "meson.build", "build.sbt", "SConstruct", "configure", "configure.ac",
		".bazelrc", "WORKSPACE", "WORKSPACE.bazel", "MODULE.bazel", "gulpfile.*", "Gruntfile.*"}},
	{"a container that a person or CI builds or starts: what runs in it and what of this machine it gets", []string{
		"Dockerfile", "Dockerfile.*", "*.Dockerfile", "Containerfile", "Containerfile.*",
		"docker-compose.yml", "docker-compose.yaml", "docker-compose.*.yml", "docker-compose.*.yaml",
		"compose.yml", "compose.yaml", "compose.*.yml", "compose.*.yaml", "Vagrantfile"}},
}
