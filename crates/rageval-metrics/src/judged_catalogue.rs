//! The table of model-judged metrics: names, inputs, formulas, sources and modes. This file
//! is a registry; it is long because the table is.

use crate::catalogue::{Builder, Entry};
use rageval_tasks::SupportCredit;

use crate::judged::{Correctness, JudgedKind, Noise, Precision, Relevance};
use crate::metric::{Input, MetricInfo, ModeInfo};

/// Names accepted in `--metrics` that select a mode: `(alias, metric, mode)`.
pub(crate) const MODE_ALIASES: [(&str, &str, &str); 2] = [
    ("answer_relevancy", "answer_relevance", "embedding"),
    ("response_relevancy", "answer_relevance", "embedding"),
];

const Q_CONTEXTS_REFERENCE: &[Input] = &[Input::Question, Input::Contexts, Input::Reference];
const Q_CONTEXTS_ANSWER: &[Input] = &[Input::Question, Input::Contexts, Input::Answer];

const AP_FORMULA: &str = "v_k = 1 when the judge finds context k useful for arriving at the \
     reference answer (k in retrieved order, all contexts judged concurrently); \
     AP = Σ_k v_k·P@k / Σ_k v_k, P@k = (Σ_{j≤k} v_j) / k; 0 when no context is useful";

const RECALL_FORMULA: &str = "reference → statements (the sample's reference_statements when \
     given); every statement judged against all contexts in one call; credit per statement: \
     fully supported 1, partially supported 0.5, not supported or contradicted 0 — a judge \
     that measures a degree of support (the heuristic) gives a supported statement that \
     degree instead; score = mean credit; undefined when the reference states nothing";

const FAITHFULNESS_FORMULA: &str = "answer → atomic claims (the sample's answer_statements \
     when given); all claims judged in one call as fully / partially / not supported / \
     contradicted, with the supporting context; credit per claim: 1 when fully supported \
     (the judge's degree of support instead, when it measures one: the heuristic), else 0; \
     score = mean credit (partial and contradicted counted in the evidence); undefined when \
     the answer states no claims";

const STATEMENT_RECALL_FORMULA: &str = "reference → statements; all judged against the \
     answer in one call; credit per statement as context_recall's (fully 1, partially 0.5, \
     else 0; a measured degree of support instead where the judge gives one); score = mean \
     credit; undefined when the reference states nothing";

const JUDGED_ENTRIES: usize = 15;

/// Each judged metric's summary in Chinese, for pages shown in Chinese (the labelling page
/// asks a person what the metric asks the judge). Written for people who label, not
/// translated formulas.
pub(crate) const SUMMARIES_ZH: [(&str, &str); JUDGED_ENTRIES] = [
    (
        "context_precision",
        "对得出参考答案有用的上下文是否排在前面？（按检索顺序计算平均精度）",
    ),
    (
        "context_precision_strict",
        "同上下文精度，但最后一条有用上下文之后的无关上下文也会扣分",
    ),
    (
        "useful_context_precision",
        "对生成回答有帮助的上下文是否排在前面？",
    ),
    (
        "context_recall",
        "参考答案中的陈述，有多大比例能由检索到的上下文支持？",
    ),
    (
        "context_relevance",
        "检索到的上下文中，有多大比例与问题相关？",
    ),
    (
        "faithfulness",
        "回答中的陈述，有多大比例能完全由检索到的上下文支持？",
    ),
    ("answer_relevance", "回答是否切题、回应了所提的问题？"),
    ("answer_correctness", "回答所说的内容是否与参考答案一致？"),
    (
        "semantic_similarity",
        "回答与参考答案在语义上有多接近？（向量的余弦相似度）",
    ),
    (
        "context_entity_recall",
        "参考答案提到的命名实体，有多大比例出现在上下文中？",
    ),
    (
        "noise_sensitivity",
        "回答中有多大比例的陈述是错的，却能在某条相关上下文中找到出处？（越低越好）",
    ),
    (
        "abstention",
        "上下文能支持作答时是否作答、不能支持时是否拒答（如“无法回答”）？",
    ),
    (
        "knowledge_retention",
        "对话中的回复是否记住了用户前面已说明的内容（不与之矛盾，也不再次询问）？",
    ),
    (
        "citation_faithfulness",
        "回答中带引用标注（如 [1]、【2】）的句子，有多大比例能由它所引用的那条上下文支持？",
    ),
    (
        "tool_argument_correctness_judged",
        "工具调用的参数是否与预期一致？自由文本参数（如检索词）只要意思相同即算一致",
    ),
];

const fn entry(
    name: &'static str,
    aliases: &'static [&'static str],
    summary: &'static str,
    inputs: &'static [Input],
    (formula, source): (&'static str, &'static str),
    modes: &'static [ModeInfo],
    kinds: &'static [JudgedKind],
) -> Entry {
    Entry {
        info: MetricInfo {
            name,
            aliases,
            summary,
            inputs,
            formula,
            source,
            takes_cutoff: false,
            needs_model: true,
            modes,
        },
        builder: Builder::Judged(kinds),
    }
}

const fn mode(
    name: &'static str,
    summary: &'static str,
    formula: &'static str,
    source: &'static str,
) -> ModeInfo {
    ModeInfo {
        name,
        summary,
        formula,
        source,
    }
}

pub(crate) static JUDGED: [Entry; JUDGED_ENTRIES] = [
    entry(
        "context_precision",
        &[
            "llm_context_precision_with_reference",
            "context_precision_with_reference",
        ],
        "were the contexts useful for the reference answer ranked first? (average precision)",
        Q_CONTEXTS_REFERENCE,
        (
            AP_FORMULA,
            "ragas LLMContextPrecisionWithReference; seeds S0/S1 (AP)",
        ),
        &[
            mode(
                "exact",
                "average precision, exact: a perfect ranking scores 1",
                AP_FORMULA,
                "seeds S0/S1; ragas LLMContextPrecisionWithReference without its epsilon",
            ),
            mode(
                "ragas",
                "average precision with ragas's +1e-10, to reproduce ragas's numbers",
                "as `exact`, AP = Σ_k v_k·P@k / (Σ_k v_k + 1e-10): a perfect ranking \
                 scores 1 − 1e-10·…, never exactly 1",
                "ragas LLMContextPrecisionWithReference (ragas issue #2909)",
            ),
        ],
        &[
            JudgedKind::ContextPrecision(Precision::Exact),
            JudgedKind::ContextPrecision(Precision::Ragas),
        ],
    ),
    entry(
        "context_precision_strict",
        &[],
        "context precision that also charges irrelevant contexts after the last useful one",
        Q_CONTEXTS_REFERENCE,
        (
            "v_k as context_precision; strict AP = (1/n) Σ_{k=1..n} P@k over every position \
         (`[1,0]` → 0.75, `[0,1]` → 0.25)",
            "seed S2",
        ),
        &[],
        &[JudgedKind::ContextPrecision(Precision::Strict)],
    ),
    entry(
        "useful_context_precision",
        &[
            "context_utilization",
            "llm_context_precision_without_reference",
        ],
        "were the contexts that helped produce the generated answer ranked first?",
        Q_CONTEXTS_ANSWER,
        (
            "v_k = 1 when the judge finds context k useful for producing the generated answer \
         (with its reasoning; concurrent per context); AP = Σ_k v_k·P@k / Σ_k v_k, 0 when none \
         is useful",
            "seed S0; ragas LLMContextPrecisionWithoutReference (context_utilization)",
        ),
        &[],
        &[JudgedKind::UsefulContextPrecision],
    ),
    entry(
        "context_recall",
        &["llm_context_recall"],
        "share of the reference's statements that the contexts support",
        Q_CONTEXTS_REFERENCE,
        (
            RECALL_FORMULA,
            "seed S4 and ragas LLMContextRecall, with partial support given partial credit",
        ),
        &[
            mode(
                "graded",
                "share of the reference the contexts hold, partial support counting half",
                RECALL_FORMULA,
                "seed S4 and ragas LLMContextRecall, with partial credit on a linear \
                 three-step scale (as TruLens's groundedness normalises its ratings)",
            ),
            mode(
                "binary",
                "S4's count: only fully supported statements count",
                "as `graded`, credit 1 for fully supported and 0 otherwise, whatever the \
                 judge's degree: fully supported ÷ statements",
                "seed S4; ragas LLMContextRecall (ragas splits and classifies in one call)",
            ),
        ],
        &[
            JudgedKind::ContextRecall(SupportCredit::Graded),
            JudgedKind::ContextRecall(SupportCredit::FullOnly),
        ],
    ),
    entry(
        "context_relevance",
        &[],
        "share of the contexts that are about the question",
        &[Input::Question, Input::Contexts],
        (
            "each context judged relevant to the question or not (concurrently); relevant ÷ \
         contexts",
            "seed S4 (S1 context relevance)",
        ),
        &[],
        &[JudgedKind::ContextRelevance],
    ),
    entry(
        "faithfulness",
        &[],
        "share of the answer's claims that the contexts fully support",
        Q_CONTEXTS_ANSWER,
        (
            FAITHFULNESS_FORMULA,
            "seeds S1/S4; ragas Faithfulness (a measured degree of support refines the count)",
        ),
        &[
            mode(
                "graded",
                "fully supported claims, each counted by its degree of support when the judge \
                 measures one",
                FAITHFULNESS_FORMULA,
                "seeds S1/S4; ragas Faithfulness (a measured degree of support refines the \
                 count)",
            ),
            mode(
                "binary",
                "S1/S4's count: fully supported ÷ claims, whatever the judge's degree",
                "as `graded`, credit 1 for fully supported and 0 otherwise: fully supported ÷ \
                 claims",
                "seeds S1/S4; ragas Faithfulness",
            ),
        ],
        &[
            JudgedKind::Faithfulness(SupportCredit::FullByDegree),
            JudgedKind::Faithfulness(SupportCredit::FullOnly),
        ],
    ),
    entry(
        "answer_relevance",
        &[],
        "does the answer address the question?",
        &[Input::Question, Input::Answer],
        (
            "mode simulated_questions (default): 3 questions written from the answer (the \
         sample's simulated_questions when given), each judged the same as the real question \
         or not; similar ÷ questions",
            "seed S4 (simulated_questions), seed S1 (rubric), ragas ResponseRelevancy (embedding)",
        ),
        &[
            mode(
                "simulated_questions",
                "questions written from the answer, judged similar to the real one",
                "3 questions written from the answer (the sample's simulated_questions when \
                 given), all judged against the real question in one call; similar ÷ \
                 questions; undefined when none could be written",
                "seed S4",
            ),
            mode(
                "rubric",
                "a 1–5 rubric score, normalised",
                "the judge rates how well the answer addresses the question from 1 to 5 with \
                 a reason; (score − 1) / 4",
                "seed S1",
            ),
            mode(
                "embedding",
                "cosine of questions written from the answer with the real question",
                "3 questions written from the answer, with a noncommittal flag; mean cosine of \
                 their embeddings with the question's (one embedding request); 0 when the \
                 answer is noncommittal; may be negative",
                "ragas ResponseRelevancy / answer_relevancy (strictness 3)",
            ),
        ],
        &[
            JudgedKind::AnswerRelevance(Relevance::SimulatedQuestions),
            JudgedKind::AnswerRelevance(Relevance::Rubric),
            JudgedKind::AnswerRelevance(Relevance::Embedding),
        ],
    ),
    entry(
        "answer_correctness",
        &[],
        "does the answer say what the reference says?",
        &[Input::Question, Input::Answer, Input::Reference],
        (
            "mode statement_recall (default): the reference's statements judged against the \
         answer, partial support counting half; mean credit",
            "seed S4 (statement_recall, binary); ragas AnswerCorrectness (ragas)",
        ),
        &[
            mode(
                "statement_recall",
                "share of the reference the answer states, partial support counting half",
                STATEMENT_RECALL_FORMULA,
                "seed S4, with partial credit as context_recall's",
            ),
            mode(
                "ragas",
                "ragas's F1 of answer and reference statements blended with embedding \
                 similarity",
                "TP = answer statements the reference supports, FP = those it does not, FN = \
                 reference statements the answer does not support (two concurrent calls); \
                 F = F1(TP, FP, FN) with P or R = 0 when its denominator is 0; score = 0.75·F + \
                 0.25·cosine(answer, reference); undefined when the reference states nothing",
                "ragas AnswerCorrectness (weights [0.75, 0.25], beta 1)",
            ),
            mode(
                "binary",
                "S4's statement recall: only fully supported statements count",
                "reference → statements; all judged against the answer in one call; fully \
                 supported ÷ statements, whatever the judge's degree; undefined when the \
                 reference states nothing",
                "seed S4",
            ),
        ],
        &[
            JudgedKind::AnswerCorrectness(Correctness::StatementRecall(SupportCredit::Graded)),
            JudgedKind::AnswerCorrectness(Correctness::Ragas),
            JudgedKind::AnswerCorrectness(Correctness::StatementRecall(SupportCredit::FullOnly)),
        ],
    ),
    entry(
        "semantic_similarity",
        &["answer_similarity"],
        "cosine similarity of the answer's and the reference's embeddings",
        &[Input::Answer, Input::Reference],
        (
            "cosine(embed(response), embed(reference)), in [−1, 1]",
            "ragas SemanticSimilarity; seed S1 (embedding similarity)",
        ),
        &[],
        &[JudgedKind::SemanticSimilarity],
    ),
    entry(
        "context_entity_recall",
        &[],
        "share of the reference's named entities that the contexts name",
        &[Input::Contexts, Input::Reference],
        (
            "entities of the reference and of the joined contexts (two concurrent calls), \
         case-folded, each once; |ref ∩ ctx| / |ref|; undefined when the reference names none",
            "ragas ContextEntityRecall (ragas matches exact strings)",
        ),
        &[],
        &[JudgedKind::ContextEntityRecall],
    ),
    entry(
        "noise_sensitivity",
        &[],
        "share of the answer's claims that are wrong yet supported by a relevant context \
         (lower is better)",
        &[
            Input::Question,
            Input::Contexts,
            Input::Answer,
            Input::Reference,
        ],
        (
            "mode relevant (default): context j relevant when it supports a reference statement; \
         score = mean over answer statements of [not supported by the reference ∧ supported \
         by a relevant context]; lower is better",
            "ragas NoiseSensitivity",
        ),
        &[
            mode(
                "relevant",
                "wrong claims supported by relevant contexts",
                "per context j: reference statements and answer statements judged against it \
                 (2K concurrent calls) and answer statements against the reference; mean_a \
                 [¬GT2A[a] ∧ ∃j relevant_j ∧ R2A[a,j]]; lower is better",
                "ragas NoiseSensitivity(mode=relevant)",
            ),
            mode(
                "irrelevant",
                "wrong claims supported only by irrelevant contexts",
                "as `relevant`, counting claims supported by an irrelevant context and by no \
                 relevant one; lower is better",
                "ragas NoiseSensitivity(mode=irrelevant)",
            ),
        ],
        &[
            JudgedKind::NoiseSensitivity(Noise::Relevant),
            JudgedKind::NoiseSensitivity(Noise::Irrelevant),
        ],
    ),
    entry(
        "abstention",
        &[],
        "did the system answer when its contexts supported an answer, and decline when \
         they did not?",
        &[Input::Question, Input::Answer],
        (
            "one judge call per sample gives two verdicts: the contexts support an answer \
         to the question (S), the answer declines to answer (A); score 1 when S ∧ ¬A or \
         ¬S ∧ A, else 0, the quadrant in the evidence; the summary counts the 2×2 table \
         with abstention recall A∧¬S ÷ ¬S, false abstention rate A∧S ÷ S, abstention \
         precision A∧¬S ÷ A and accuracy, each with a 95% Wilson interval; the heuristic \
         judge detects refusal phrases (en, zh) but cannot tell S, so its cells are \
         undefined",
            "DeepEval AbstentionMetric proposal (PR #2843) and ragas risk-control metrics \
         (issue #2279: risk, carefulness, coverage); Wilson (1927) intervals",
        ),
        &[],
        &[JudgedKind::Abstention],
    ),
    entry(
        "citation_faithfulness",
        &[],
        "share of the answer's citing sentences that the contexts they cite support",
        Q_CONTEXTS_ANSWER,
        (
            "the answer split into sentences (as the heuristic splits statements); markers \
         [n], [n, m], [^n], 【n】 and [docN] name context n (1-based), a bracketed context id \
         names that context, and a marker opening a sentence cites the one before; each \
         citing sentence (markers removed) judged against the contexts it cites alone, one \
         support call per distinct set of cited contexts; credit 1 when fully supported, \
         else 0; a citation of a context that does not exist counts as unsupported and is \
         named in the evidence; score = fully supported ÷ citing sentences; citation \
         coverage (citing ÷ all sentences) in the evidence; undefined when the answer cites \
         no source",
            "ragas CitationFaithfulness proposal (PR #2811), TruLens citation attribution \
         (issue #2408); support verdicts as seeds S1/S4 faithfulness",
        ),
        &[],
        &[JudgedKind::CitationFaithfulness],
    ),
    entry(
        "knowledge_retention",
        &[],
        "does each reply of a conversation keep what the user established earlier: no \
         contradiction of it, no asking for it again?",
        &[Input::Question, Input::Answer, Input::Conversation],
        (
            "per turn with a history, one judge call shown the earlier turns' messages, the \
         question and the reply: does the reply contradict something the user said earlier \
         (C), does it ask the user again for something the user already gave (R)? score 1 \
         when ¬C ∧ ¬R, else 0, both flags and the reason in the evidence; a first turn is \
         undefined (nothing earlier to keep); a conversation's figure is the mean over its \
         judged turns; the heuristic judge cannot tell a restated fact from a contradicted \
         one, so only a chat model answers it",
            "DeepEval KnowledgeRetentionMetric (conversational), judged per turn",
        ),
        &[],
        &[JudgedKind::KnowledgeRetention],
    ),
    entry(
        "tool_argument_correctness_judged",
        &["tool_arguments_judged"],
        "did the calls of the expected tools get the expected arguments, free text judged \
         by its meaning?",
        &[Input::ReferenceToolCalls],
        (
            "calls paired as tool_argument_correctness pairs them; per pair, each argument \
         key of either call agrees when its values are equal once normalised (as its \
         `normalised` mode), or when both are text that differs and the judge finds they \
         mean the same (one judge call per pair for all its free-text arguments; a pair \
         without such arguments asks nothing); a key in one call only disagrees; pair \
         score = agreeing keys ÷ keys of either call (1 without arguments); score = mean \
         over pairs; undefined when no pair; each argument's verdict, by rule or judge, in \
         the evidence; the heuristic judge finds text the same at content-word Dice \
         overlap ≥ 0.5",
            "ours; pairing as ragas ToolCallAccuracy, whose arg_comparison_metric lets \
         another comparison replace its exact string match",
        ),
        &[],
        &[JudgedKind::ToolArgumentMeaning],
    ),
];
