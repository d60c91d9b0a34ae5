// Package ci_test checks the CI examples of docs/ci.md: the GitHub Actions workflow (also
// linted by actionlint in `make test`), the Kubernetes Job and the Dockerfile. The workflow's
// and the Job's scripts are run for real — with the sidecar built from this tree, a dry run
// instead of the agent CLI, a local bare repository as origin and a stub for gh — so what the
// page shows is what works.
package ci_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/agentcanvas/agentcanvas/sidecar/diag"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/validate"
)

const secretValue = "sk-ant-test-0123456789abcdef" // must never be written anywhere

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The page shows the files as they are (the tests and actionlint check these files).
func TestTheDocShowsTheFiles(t *testing.T) {
	doc := string(read(t, filepath.Join("..", "ci.md")))
	for _, name := range []string{"github-actions.yml", "kubernetes-job.yaml", "Dockerfile", "flows/nightly-fix.yaml"} {
		if !strings.Contains(doc, "\n"+string(read(t, name))+"```") {
			t.Errorf("docs/ci.md does not show docs/ci/%s as it is (copy the file into its code block)", name)
		}
	}
}

// --- the files' structure -------------------------------------------------------------------

type step struct {
	Name string            `yaml:"name"`
	ID   string            `yaml:"id"`
	If   string            `yaml:"if"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	Env  map[string]string `yaml:"env"`
	With map[string]any    `yaml:"with"`
}

type workflow struct {
	On   map[string]any `yaml:"on"`
	Jobs map[string]struct {
		Permissions map[string]string `yaml:"permissions"`
		Env         map[string]string `yaml:"env"`
		Steps       []step            `yaml:"steps"`
	} `yaml:"jobs"`
}

func loadWorkflow(t *testing.T) workflow {
	t.Helper()
	var w workflow
	if err := yaml.Unmarshal(read(t, "github-actions.yml"), &w); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w workflow) step(t *testing.T, name string) step {
	t.Helper()
	for _, s := range w.Jobs["run-flow"].Steps {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("the workflow has no step %q", name)
	return step{}
}

// container is the part of a Kubernetes container the checks read.
type container struct {
	Name       string   `yaml:"name"`
	Image      string   `yaml:"image"`
	Command    []string `yaml:"command"`
	WorkingDir string   `yaml:"workingDir"`
	Env        []struct {
		Name      string `yaml:"name"`
		Value     string `yaml:"value"`
		ValueFrom *struct {
			SecretKeyRef *struct {
				Name string `yaml:"name"`
				Key  string `yaml:"key"`
			} `yaml:"secretKeyRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
	SecurityContext struct {
		AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
	} `yaml:"securityContext"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
		SubPath   string `yaml:"subPath"`
	} `yaml:"volumeMounts"`
}

type k8sDoc struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name         string `yaml:"name"`
		GenerateName string `yaml:"generateName"`
	} `yaml:"metadata"`
	Spec struct {
		BackoffLimit          *int `yaml:"backoffLimit"`
		ActiveDeadlineSeconds int  `yaml:"activeDeadlineSeconds"`
		Template              struct {
			Spec struct {
				RestartPolicy   string      `yaml:"restartPolicy"`
				InitContainers  []container `yaml:"initContainers"`
				Containers      []container `yaml:"containers"`
				SecurityContext struct {
					RunAsNonRoot bool `yaml:"runAsNonRoot"`
				} `yaml:"securityContext"`
				Volumes []struct {
					Name                  string `yaml:"name"`
					PersistentVolumeClaim *struct {
						ClaimName string `yaml:"claimName"`
					} `yaml:"persistentVolumeClaim"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

func loadK8s(t *testing.T) (pvc, job k8sDoc) {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(read(t, "kubernetes-job.yaml")))
	for {
		var d k8sDoc
		if err := dec.Decode(&d); err != nil {
			break
		}
		switch d.Kind {
		case "PersistentVolumeClaim":
			pvc = d
		case "Job":
			job = d
		default:
			t.Errorf("unexpected kind %q", d.Kind)
		}
	}
	return pvc, job
}

// flowSecrets are the environment names the example flow's agents list.
func flowSecrets(t *testing.T) []string {
	t.Helper()
	file := filepath.Join("flows", "nightly-fix.yaml")
	f := flow.Parse(file, read(t, file))
	for _, d := range validate.Flow(f, validate.Workspace{}) {
		if d.Severity == diag.Error {
			t.Errorf("the example flow does not validate: %s", d)
		}
	}
	set := map[string]bool{}
	for _, a := range f.Agents {
		for _, e := range a.Runtime.Env {
			set[e] = true
		}
	}
	return slices.Sorted(func(yield func(string) bool) {
		for k := range set {
			if !yield(k) {
				return
			}
		}
	})
}

// Secrets come from the platform's store as the environment variables the flow names: the
// workflow's run step and the Job's container give exactly those, from secrets, and nothing
// else from secrets.
func TestSecretsAreTheFlowsEnvironmentNames(t *testing.T) {
	want := flowSecrets(t)
	if len(want) == 0 {
		t.Fatal("the example flow names no environment variables")
	}
	var got []string
	for k, v := range loadWorkflow(t).step(t, "Run the flow").Env {
		if strings.Contains(v, "secrets.") {
			if v != "${{ secrets."+k+" }}" {
				t.Errorf("%s = %s: a secret goes in under its own name", k, v)
			}
			got = append(got, k)
		}
	}
	sort.Strings(got)
	if !slices.Equal(got, want) {
		t.Errorf("the workflow passes secrets %v, the flow names %v", got, want)
	}
	_, job := loadK8s(t)
	got = nil
	for _, e := range job.Spec.Template.Spec.Containers[0].Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			got = append(got, e.Name)
		}
	}
	sort.Strings(got)
	if !slices.Equal(got, want) {
		t.Errorf("the Job passes secrets %v, the flow names %v", got, want)
	}
}

func TestWorkflowShape(t *testing.T) {
	w := loadWorkflow(t)
	for _, ev := range []string{"schedule", "issues"} {
		if _, ok := w.On[ev]; !ok {
			t.Errorf("the workflow does not run on %s", ev)
		}
	}
	j := w.Jobs["run-flow"]
	if j.Permissions["contents"] != "write" || j.Permissions["pull-requests"] != "write" {
		t.Errorf("permissions = %v", j.Permissions)
	}
	if c := w.step(t, "Run the flow"); !strings.Contains(w.Jobs["run-flow"].Steps[0].Uses, "actions/checkout@") || w.Jobs["run-flow"].Steps[0].With["persist-credentials"] != false || c.ID != "run" {
		t.Error("the checkout must not persist the token (the agents run in the checkout)")
	}
	up := w.step(t, "Upload the log, the summary and the patch")
	if !strings.HasPrefix(up.Uses, "actions/upload-artifact@") || up.If != "always()" || !strings.Contains(up.With["path"].(string), ".agentcanvas/logs/") || !strings.Contains(up.With["path"].(string), "agentcanvas.patch") {
		t.Errorf("upload step = %+v", up)
	}
	for _, s := range j.Steps {
		if strings.Contains(s.Run, "${{") {
			t.Errorf("step %q puts an expression in its script; pass it through env", s.Name)
		}
	}
}

func TestKubernetesJobShape(t *testing.T) {
	pvc, job := loadK8s(t)
	if pvc.APIVersion != "v1" || pvc.Metadata.Name != "agentcanvas-state" {
		t.Errorf("PVC = %+v", pvc.Metadata)
	}
	s := job.Spec
	if job.APIVersion != "batch/v1" || s.BackoffLimit == nil || *s.BackoffLimit != 0 || s.ActiveDeadlineSeconds <= 0 || s.Template.Spec.RestartPolicy != "Never" || !s.Template.Spec.SecurityContext.RunAsNonRoot {
		t.Errorf("Job spec: %+v", s)
	}
	if len(s.Template.Spec.Containers) != 1 || len(s.Template.Spec.InitContainers) != 1 {
		t.Fatalf("want one init container (the clone) and one container (the run)")
	}
	c := s.Template.Spec.Containers[0]
	if c.Image == "" || strings.HasSuffix(c.Image, ":latest") || !strings.Contains(c.Image, ":") {
		t.Errorf("image %q: pin a tag", c.Image)
	}
	if c.SecurityContext.AllowPrivilegeEscalation == nil || *c.SecurityContext.AllowPrivilegeEscalation {
		t.Error("allowPrivilegeEscalation must be false")
	}
	// The state is the workspace's .agentcanvas/ (but its flows and skills come with the clone).
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m.Name + ":" + m.SubPath
	}
	for _, d := range []string{"logs", "runs", "sandboxes", "memory"} {
		if mounts[c.WorkingDir+"/.agentcanvas/"+d] != "state:"+d {
			t.Errorf(".agentcanvas/%s is not on the state volume: %v", d, mounts)
		}
	}
	if len(c.Command) != 3 || c.Command[0] != "/bin/bash" {
		t.Errorf("command = %q", c.Command)
	}
	claimed := false
	for _, v := range s.Template.Spec.Volumes {
		claimed = claimed || v.Name == "state" && v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == pvc.Metadata.Name
	}
	if !claimed {
		t.Error("the state volume is not the claim")
	}
}

// The Dockerfile, checked for what matters without docker: a pinned base for each stage, the
// sidecar built from files that exist, the agent CLIs pinned from the npm registry (to the
// versions package.json pins, when it pins them), a non-root user, agentcanvas as the
// entrypoint.
func TestDockerfileShape(t *testing.T) {
	var froms, copies []string
	var entry, user string
	args := map[string]string{}
	body := strings.ReplaceAll(string(read(t, "Dockerfile")), "\\\n", " ")
	for _, l := range strings.Split(body, "\n") {
		f := strings.Fields(l)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		switch strings.ToUpper(f[0]) {
		case "FROM":
			froms = append(froms, f[1])
		case "COPY":
			copies = append(copies, strings.Join(f[1:], " "))
		case "ENTRYPOINT":
			entry = strings.Join(f[1:], " ")
		case "USER":
			user = f[1]
		case "ARG":
			k, v, _ := strings.Cut(f[1], "=")
			args[k] = v
		}
	}
	if len(froms) != 2 {
		t.Fatalf("FROM = %v: want a build stage and a runtime stage", froms)
	}
	for _, from := range froms {
		if !strings.Contains(from, ":") || strings.HasSuffix(from, ":latest") {
			t.Errorf("FROM %s: pin a tag", from)
		}
	}
	for _, c := range copies {
		if strings.HasPrefix(c, "--from=") {
			if c != "--from=sidecar /out/agentcanvas /usr/local/bin/agentcanvas" {
				t.Errorf("COPY %s", c)
			}
			continue
		}
		f := strings.Fields(c)
		for _, src := range f[:len(f)-1] {
			if _, err := os.Stat(filepath.Join("..", "..", src)); err != nil {
				t.Errorf("COPY %s: %v", src, err)
			}
		}
	}
	if entry != `["agentcanvas"]` || user == "" || user == "root" || user == "0" {
		t.Errorf("ENTRYPOINT %s, USER %q", entry, user)
	}
	pins := map[string]string{"@anthropic-ai/claude-code": args["CLAUDE_CODE_VERSION"], "@openai/codex": args["CODEX_VERSION"], "@google/gemini-cli": args["GEMINI_CLI_VERSION"]}
	var pkg struct{ DevDependencies map[string]string }
	json.Unmarshal(read(t, filepath.Join("..", "..", "package.json")), &pkg)
	for name, v := range pins {
		if !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(v) || !strings.Contains(body, `"`+name+"@${") {
			t.Errorf("%s is not installed at a pinned version (%q)", name, v)
		}
		if dev, ok := pkg.DevDependencies[name]; ok && dev != v {
			t.Errorf("%s: the image pins %s, package.json %s", name, v, dev)
		}
	}
	// The context holds what the COPYs need and no more.
	ignore := string(read(t, "Dockerfile.dockerignore"))
	for _, keep := range []string{"!go.mod", "!go.sum", "!sidecar/", "!patterns/"} {
		if !strings.Contains(ignore, "\n"+keep+"\n") {
			t.Errorf("Dockerfile.dockerignore does not keep %s", keep)
		}
	}
}

// --- the scripts, run ------------------------------------------------------------------------

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// sidecar builds bin/agentcanvas of this tree once for the tests.
func sidecar(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "agentcanvas-ci-test")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "agentcanvas")
		out, err := exec.Command("go", "build", "-o", binary, "../../sidecar/cmd/agentcanvas").CombinedOutput()
		if err != nil {
			buildErr = err
			binary = string(out)
		}
	})
	if buildErr != nil {
		t.Fatalf("go build: %v\n%s", buildErr, binary)
	}
	return binary
}

// bench is a machine like a CI runner's: a repository whose origin is a local bare one,
// `agentcanvas` on PATH (running flows with the dry-run backend: no agent CLI, no key), and a
// stub for gh that records what it was asked.
type bench struct {
	t        *testing.T
	origin   string
	checkout string
	stubs    string
	home     string
	ghLog    string
}

func newBench(t *testing.T) *bench {
	t.Helper()
	for _, tool := range []string{"git", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	b := &bench{t: t, stubs: t.TempDir(), home: t.TempDir()}
	b.ghLog = filepath.Join(b.home, "gh.log")
	real := sidecar(t)
	b.write(b.stubs, "agentcanvas", "#!/usr/bin/env bash\nif [ \"$1\" = run ]; then shift; exec "+real+" run --dry-run \"$@\"; fi\nexec "+real+" \"$@\"\n", 0o755)
	b.write(b.stubs, "gh", "#!/usr/bin/env bash\necho \"$*\" >> \""+b.ghLog+"\"\n", 0o755)

	src := t.TempDir()
	b.write(src, ".gitignore", ".agentcanvas/*\n!.agentcanvas/flows/\n!.agentcanvas/skills/\n", 0o644)
	b.write(src, ".agentcanvas/flows/nightly-fix.yaml", string(read(t, filepath.Join("flows", "nightly-fix.yaml"))), 0o644)
	b.write(src, "src/app.ts", "export const answer = 41;\n", 0o644)
	b.write(src, "test/app.test.ts", "import { answer } from '../src/app';\nconsole.assert(answer === 42);\n", 0o644)
	b.git(src, "init", "-q", "-b", "main")
	b.git(src, "add", "-A")
	b.git(src, "commit", "-q", "-m", "a project")
	b.origin = filepath.Join(t.TempDir(), "origin.git")
	b.git(src, "clone", "-q", "--bare", src, b.origin)
	b.checkout = b.clone()
	return b
}

func (b *bench) write(dir, name, content string, mode os.FileMode) {
	p := filepath.Join(dir, name)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		b.t.Fatal(err)
	}
}

func (b *bench) env(extra map[string]string) []string {
	env := []string{"PATH=" + b.stubs + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + b.home, "GIT_CONFIG_NOSYSTEM=1", "LANG=C.UTF-8",
		"GIT_AUTHOR_NAME=dev", "GIT_AUTHOR_EMAIL=dev@example.com", "GIT_COMMITTER_NAME=dev", "GIT_COMMITTER_EMAIL=dev@example.com"}
	for k, v := range extra {
		env = append(env, k+"="+v)
	}
	return env
}

func (b *bench) git(dir string, args ...string) string {
	b.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, b.env(nil)
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (b *bench) clone() string {
	dir := b.t.TempDir()
	b.git(dir, "clone", "-q", b.origin, ".")
	return dir
}

// script runs a script as GitHub runs a bash step (bash -eo pipefail) in dir.
func (b *bench) script(dir, name, body string, env map[string]string) string {
	b.t.Helper()
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", body)
	cmd.Dir, cmd.Env = dir, b.env(env)
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.t.Fatalf("step %q: %v\n%s", name, err, out)
	}
	return string(out)
}

// noSecretOnDisk: the secret's value is in no file of dir (logs, state, summary, patch, .git).
func noSecretOnDisk(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(secretValue)) {
				t.Errorf("the secret was written to %s", p)
			}
		}
		return nil
	})
}

var expression = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// The workflow's steps, run one after the other as on a runner for a scheduled run: the flow
// runs (its summary in the job summary), its proposals are exported, and the pull request step
// commits them with git am, pushes the branch and asks gh for the pull request.
func TestWorkflowStepsRunAFlowAndOpenAPullRequest(t *testing.T) {
	w := loadWorkflow(t)
	b := newBench(t)
	output := filepath.Join(b.home, "github_output")
	summary := filepath.Join(b.home, "step_summary")
	outputs := func() map[string]string {
		m := map[string]string{}
		data, _ := os.ReadFile(output)
		for _, l := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(l, "="); ok {
				m[k] = v
			}
		}
		os.Remove(output) // each step has its own $GITHUB_OUTPUT
		return m
	}
	stepOutputs := map[string]map[string]string{}
	values := func(expr string) string {
		switch {
		case strings.HasPrefix(expr, "secrets."):
			return secretValue
		case expr == "github.event.issue.title || inputs.task":
			return "" // a scheduled run: the flow's description is the task
		case expr == "github.token":
			return "ghs_test"
		case strings.HasPrefix(expr, "steps."):
			parts := strings.Split(expr, ".") // steps.ID.outputs.NAME
			return stepOutputs[parts[1]][parts[3]]
		}
		t.Fatalf("the test does not know the expression %q: teach it", expr)
		return ""
	}
	for _, name := range []string{"Run the flow", "Export the proposals as one patch", "Open a pull request"} {
		s := w.step(t, name)
		env := map[string]string{"GITHUB_OUTPUT": output, "GITHUB_STEP_SUMMARY": summary}
		for k, v := range w.Jobs["run-flow"].Env {
			env[k] = v
		}
		for k, v := range s.Env {
			env[k] = expression.ReplaceAllStringFunc(v, func(m string) string { return values(expression.FindStringSubmatch(m)[1]) })
		}
		out := b.script(b.checkout, name, s.Run, env)
		stepOutputs[s.ID] = outputs()
		t.Logf("%s:\n%s", name, out)
	}

	runID := stepOutputs["run"]["run_id"]
	if !regexp.MustCompile(`^run_\d{8}-\d{6}_[0-9a-f]{6}$`).MatchString(runID) || stepOutputs["export"]["changes"] != "true" {
		t.Fatalf("outputs = %v", stepOutputs)
	}
	if s := string(read(t, summary)); !strings.HasPrefix(s, "## ✅ AgentCanvas: `nightly-fix` completed") || !strings.Contains(s, "dry-run-coder.md") {
		t.Errorf("job summary:\n%s", s)
	}
	// The branch reached origin with the proposal as a commit by its agent.
	log := b.git(b.origin, "log", "--format=%an|%cn|%s", "agentcanvas/"+runID, "-1")
	if log != "coder (AgentCanvas)|github-actions[bot]|coder: a small labelled edit in the sandbox\n" {
		t.Errorf("origin's branch: %q", log)
	}
	gh := string(read(t, b.ghLog))
	if !strings.Contains(gh, "auth setup-git\n") || !strings.Contains(gh, "pr create --head agentcanvas/"+runID+" --title AgentCanvas: nightly-fix ("+runID+") --body-file agentcanvas-summary.md") {
		t.Errorf("gh was asked:\n%s", gh)
	}
	noSecretOnDisk(t, b.checkout)
	noSecretOnDisk(t, b.home)
}

// The Job's container script, run in a fresh clone as the pod would: the run, then its
// summary and patch next to its state; the patch applies to the clone.
func TestKubernetesJobScriptRunsAFlow(t *testing.T) {
	_, job := loadK8s(t)
	c := job.Spec.Template.Spec.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom != nil:
			env[e.Name] = secretValue
		case e.Name != "HOME":
			env[e.Name] = e.Value
		}
	}
	b := newBench(t)
	out := b.script(b.checkout, "the Job's container", c.Command[2], env)
	m := regexp.MustCompile(`state: \.agentcanvas/runs/(run_\S+)/ `).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the script does not say where the state is:\n%s", out)
	}
	dir := filepath.Join(b.checkout, ".agentcanvas", "runs", m[1])
	if s := read(t, filepath.Join(dir, "summary.md")); !bytes.Contains(s, []byte("AgentCanvas: `nightly-fix` completed")) {
		t.Errorf("summary.md:\n%s", s)
	}
	if p := read(t, filepath.Join(dir, "export.patch")); !bytes.Contains(p, []byte("Subject: [PATCH] coder: ")) {
		t.Errorf("export.patch:\n%s", p)
	}
	b.git(b.checkout, "apply", "--check", filepath.Join(dir, "export.patch"))
	noSecretOnDisk(t, b.checkout)
}
