// Fixtures: what the sidecar's real loader makes of testdata/*.yaml (see testdata/dumpflow).
import type { LoadFlowResult, PatternInfo } from "../../../src/canvas/protocol";
import allPatternsJSON from "../testdata/all-patterns.json";
import brokenJSON from "../testdata/broken.json";
import connectJSON from "../testdata/connect.json";
import firstSightJSON from "../testdata/first-sight.json";
import patternsJSON from "../testdata/patterns.json";
import problemsJSON from "../testdata/problems.json";
import team20JSON from "../testdata/team-20.json";
import debateChainJSON from "../testdata/debate-chain.json";
import fourPatternsJSON from "../testdata/four-patterns.json";
import team13JSON from "../testdata/team-13.json";
import twentyPatternsJSON from "../testdata/twenty-patterns.json";
import unknownAgentJSON from "../testdata/unknown-agent.json";

export const allPatterns = allPatternsJSON as unknown as LoadFlowResult;
export const problems = problemsJSON as unknown as LoadFlowResult;
export const broken = brokenJSON as unknown as LoadFlowResult;
export const connectFlow = connectJSON as unknown as LoadFlowResult;
/** three agents, no layout (the flow of the e2e test's first-open step) */
export const firstSight = firstSightJSON as unknown as LoadFlowResult;
/** twenty agents and four system nodes, no layout */
export const team20 = team20JSON as unknown as LoadFlowResult;
export const debateChain = debateChainJSON as unknown as LoadFlowResult;
export const fourPatterns = fourPatternsJSON as unknown as LoadFlowResult;
/** thirteen agents in four patterns (a debate first), no layout */
export const team13 = team13JSON as unknown as LoadFlowResult;
/** all twenty patterns over 48 agents and 14 system nodes, no layout */
export const twentyPatterns = twentyPatternsJSON as unknown as LoadFlowResult;
/** a manager whose second worker is misspelt */
export const unknownAgent = unknownAgentJSON as unknown as LoadFlowResult;
/** agentcanvas/listPatterns as the sidecar answers it (see testdata/dumppatterns). */
export const patterns = patternsJSON as unknown as PatternInfo[];

export const PATTERN_IDS = [
  "manager_worker", "role_play_pair", "chat_chain_pipeline", "sop_assembly_line", "debate_judge",
  "critic_refiner_curator", "majority_vote", "self_consistency", "contract_net", "bilateral_negotiation",
  "blackboard", "publish_subscribe", "broker_facilitator", "router_targeted", "hierarchical_tree",
  "red_team_judge", "fact_check_verifier", "plan_execute_reflect", "memory_sync", "protocol_bridge",
];
