"""What the guard's hook faces tell the model (and the person) when they deny or ask, in the
person's language: one table per language (`ZH_TEXTS`, `EN_TEXTS`), the same keys and the
same meaning in both, filled by `say` and joined by `join` (Chinese sentences run on, English
ones take a space).

The judgement inside a sentence (a classification's `reason`, the own-guard's, a file tool's)
is the classifier's English, quoted as it is in either language: `dshkit guard explain` prints
the same words. Loaded only by a call that is denied or asked about, never on an allowed one.
"""

from __future__ import annotations

from ..language import EN, ZH
from .policy import Kind

_BY_HAND = "如确需运行，请让用户本人在终端里执行。"
_BY_HAND_EN = "If it must run, ask the person to run it in a terminal of their own."

ZH_TEXTS: dict[str, str] = {
    # the verdict, its frame and what was judged
    "deny": "拒绝",
    "ask": "需要人工确认",
    "risk.safe": "无破坏性",
    "risk.unknown": "无法看懂的命令",
    "risk.destructive": "破坏性命令",
    "what.leak": "凭据外发",
    "what.global_search": "、全局搜索",
    "what.opaque": "、运行看不见的代码",
    "command": "dshkit 命令风险策略（{mode}）{verb}这条命令：{what}，{reason}（{rule}）。",
    "own_guard": "dshkit 命令风险策略（{mode}）{verb}这条命令：{loosens}（内置规则 own-guard）。",
    "person_rule": "dshkit 命令风险策略按用户自己的规则拒绝这条命令：规则 {pattern}（{origin}）"
    "匹配了 `{shown}`。",
    "unjudged": "dshkit 命令风险策略（{mode}）{verb}这条命令：无法看懂的命令，{why}，"
    "无法判断它的风险。",
    "file": "dshkit 命令风险策略（{mode}）{verb}这次{action}：{what}，{reason}（{rule}）。",
    "file.write": "写入",
    "file.read": "读取",
    "file.call": "调用",
    "file.destructive": "破坏性操作",
    "file.confirm": "需要确认的操作",
    "rule.builtin": "内置规则 {name}",
    "rule.person": "用户规则 {pattern}",
    "rule.person_from": "用户规则 {pattern}（{origin}）",
    "rule.judged": "{rule}，判定于 `{words}`",
    # why a call could not be read (unjudged)
    "why.input": "调用内容里的 tool_input 不是对象，看不到要运行的命令",
    "why.command": "调用内容里的命令不是字符串（或字符串列表），无法读出要运行什么",
    "why.write_input": "调用内容里的 tool_input 不是对象，看不到要写哪个文件",
    "why.patch": "看不到这次写入的文件路径（补丁无法按补丁格式读出）",
    # what could not be read of the settings or the call (a note in the frame)
    "note.cwd": "（调用内容里的 cwd 不是字符串，不知道命令在哪个目录运行。）",
    "note.relative": "（{named} 必须是绝对路径，找不到 dshkit 的设置，按 strict 处理：{error}）",
    "note.config": "（配置无法读取，按 strict 处理：{problem}）",
    "note.mode": "（选定的模式无法读取，按 strict 处理：{problem}）",
    # the person's own words relaxing a deny (guard/intent.py's families)
    "relaxed": "本应拒绝，但用户最近的消息要求{asked}，所以只这一条改为请用户确认；"
    "其他命令照常判断。",
    "relaxed.discard": "丢弃未提交的改动",
    "relaxed.force-push": "强制推送",
    # an ask the harness does not honour, sent as a deny
    "no_ask": "{label} 不支持钩子的“需要确认”（ask），所以这次直接拒绝。",
    "no_ask.unknown": "无法确认调用它的工具支持钩子的“需要确认”（ask），所以这次直接拒绝。",
    "how_to_run": "如确需运行，请让用户本人在终端里执行这条命令；或由用户在 dshkit 的 config.toml "
    '的 [guard] allow 中加入允许规则（写法如 allow = ["git push:*"]，逐条匹配 `dshkit guard '
    "explain` 列出的单条命令），判断依据也可用它查看。",
    # what can be done instead
    "by_hand": _BY_HAND,
    "safer": "更稳妥的做法：",
    "rule_advice": "这条规则是用户本人定的：请换一种做法；如确需运行，请让用户本人执行"
    "或修改这条规则。",
    "search_advice": "请把搜索限定在工作区或一个具体目录（如 `grep -r 关键词 src/`），不要从 /、"
    "盘符根目录、家目录或 AppData 开始。",
    # per kind of harm (guard.policy.Kind): docs/design/guard.md#a-denial-says-what-to-do-instead
    f"advice.{Kind.DESTRUCTIVE}": "这一步删掉或改掉的东西无法找回：请只处理本任务自己建的、"
    "写明名字的对象。" + _BY_HAND,
    f"advice.{Kind.OUTSIDE}": "工作区外的文件不归这次任务处理：请只在工作区内删除或改动；"
    "如确需处理工作区外的文件，请让用户本人执行。",
    f"advice.{Kind.WORKSPACE}": "这会清空整个工作区：请只删除具体的文件或构建产物"
    "（如 build、dist）。",
    f"advice.{Kind.DISK}": "这会抹掉整块磁盘、分区或卷上的数据，无法撤销，不应由代理执行。"
    + _BY_HAND,
    f"advice.{Kind.WORK}": "这会丢掉还没提交的改动、没合并的提交或找回它们的记录：请先提交、"
    "`git stash` 或另建分支保存，再做。" + _BY_HAND,
    f"advice.{Kind.SHARED}": "强制推送会改写别人也在用的分支的历史：请推到自己的新分支"
    "（不加 --force），再发起合并请求；如确需改写共享分支，请让用户本人执行。",
    f"advice.{Kind.MACHINE}": "这会影响整台机器或别人也在用的服务，不应由代理执行。" + _BY_HAND,
    f"advice.{Kind.REMOTE}": "这会删掉或改动另一台机器上的东西，在这里无法核实，也无法撤销。"
    + _BY_HAND,
    f"advice.{Kind.CONFIG}": "这是凭据、shell 启动文件、git 钩子或代理工具自己的设置（包括 dshkit "
    "的守卫），改动它会影响之后的每一次运行：请只改工作区里本任务的文件；如确需修改，"
    "请让用户本人动手。",
    f"advice.{Kind.SECRET}": "这是凭据文件，读进对话会把密钥交给模型：请只读取任务需要的非机密文件"
    "（如 .env.example）；如确需使用其中的值，请让用户本人配置环境变量。",
    f"advice.{Kind.LEAK}": "这会把凭据发出这台机器，发出去就无法收回：请不要把凭据发出本机；"
    "如果对方服务确实需要，请让用户本人为它单独签发令牌，或由用户本人发送。",
    f"advice.{Kind.UNKNOWN}": "strict 模式不运行看不清会影响什么的命令：请把路径和参数写成"
    "明确的值、把内联代码写进文件再运行；如确需运行，请让用户本人执行，或由用户改用 balanced 模式"
    "（`dshkit guard mode balanced`，这类命令会先问用户）。",
    f"advice.{Kind.OPAQUE}": "看不到它实际会运行的代码：请先把要运行的内容（下载或解码的脚本）"
    "存成文件，看过后再运行那个文件。" + _BY_HAND,
}

EN_TEXTS: dict[str, str] = {
    "deny": "denies",
    "ask": "asks the person about",
    "risk.safe": "not destructive",
    "risk.unknown": "a command it cannot read",
    "risk.destructive": "a destructive command",
    "what.leak": "a secret sent off the machine",
    "what.global_search": ", a global search",
    "what.opaque": ", running code it cannot see",
    "command": "dshkit's command risk policy ({mode}) {verb} this command: {what}, {reason} "
    "({rule}).",
    "own_guard": "dshkit's command risk policy ({mode}) {verb} this command: {loosens} "
    "(built-in rule own-guard).",
    "person_rule": "dshkit's command risk policy denies this command by the person's own rule: "
    "the rule {pattern} ({origin}) matched `{shown}`.",
    "unjudged": "dshkit's command risk policy ({mode}) {verb} this command: a command it cannot "
    "read, {why}, so its risk cannot be judged.",
    "file": "dshkit's command risk policy ({mode}) {verb} this {action}: {what}, {reason} "
    "({rule}).",
    "file.write": "write",
    "file.read": "read",
    "file.call": "call",
    "file.destructive": "a destructive operation",
    "file.confirm": "an operation to confirm",
    "rule.builtin": "built-in rule {name}",
    "rule.person": "the person's rule {pattern}",
    "rule.person_from": "the person's rule {pattern} ({origin})",
    "rule.judged": "{rule}, judged on `{words}`",
    "why.input": "the call's tool_input is not an object, so the command to run cannot be seen",
    "why.command": "the call's command is not a string (or a list of strings), so what would "
    "run cannot be read",
    "why.write_input": "the call's tool_input is not an object, so the file to write cannot "
    "be seen",
    "why.patch": "the paths of this write cannot be seen (the patch cannot be read as a patch)",
    "note.cwd": "(The call's cwd is not a string: the directory the command runs in is not known.)",
    "note.relative": "({named} must be an absolute path: dshkit's settings cannot be found, so "
    "strict applies: {error})",
    "note.config": "(The config cannot be read, so strict applies: {problem})",
    "note.mode": "(The chosen mode cannot be read, so strict applies: {problem})",
    "relaxed": "It would be denied, but the person's latest message asked to {asked}, so this "
    "one command is asked about instead; every other command is judged as usual.",
    "relaxed.discard": "discard their uncommitted changes",
    "relaxed.force-push": "force-push",
    "no_ask": "{label} does not honour a hook's ask, so this is denied instead.",
    "no_ask.unknown": "Whether the tool calling it honours a hook's ask cannot be known, so "
    "this is denied instead.",
    "how_to_run": "If it must run, ask the person to run this command in a terminal of their "
    "own, or to add an allow rule to [guard] allow in dshkit's config.toml (written like "
    'allow = ["git push:*"], matched against each single command `dshkit guard explain` '
    "lists), which also shows what decided.",
    "by_hand": _BY_HAND_EN,
    "safer": "A safer way:",
    "rule_advice": "This rule is the person's own: do it another way; if it must run, ask the "
    "person to run it or to change the rule.",
    "search_advice": "Limit the search to the workspace or one specific directory (such as "
    "`grep -r keyword src/`); do not start from /, a drive root, the home directory or AppData.",
    f"advice.{Kind.DESTRUCTIVE}": "What this step deletes or changes cannot be recovered: act "
    "only on objects this task made itself and names outright. " + _BY_HAND_EN,
    f"advice.{Kind.OUTSIDE}": "Files outside the workspace are not this task's to handle: "
    "delete or change files inside the workspace only; if files outside it must be handled, "
    "ask the person to do it themselves.",
    f"advice.{Kind.WORKSPACE}": "This empties the whole workspace: delete only the specific "
    "files or build outputs (such as build, dist).",
    f"advice.{Kind.DISK}": "This wipes the data on a whole disk, partition or volume, cannot "
    "be undone, and is not for an agent to run. " + _BY_HAND_EN,
    f"advice.{Kind.WORK}": "This throws away uncommitted changes, unmerged commits or the "
    "record that could bring them back: commit, `git stash` or save them on a new branch "
    "first, then do it. " + _BY_HAND_EN,
    f"advice.{Kind.SHARED}": "A force push rewrites the history of a branch others use too: "
    "push to a new branch of your own (without --force) and open a merge request; if a shared "
    "branch must be rewritten, ask the person to do it themselves.",
    f"advice.{Kind.MACHINE}": "This affects the whole machine or services others use too, "
    "and is not for an agent to run. " + _BY_HAND_EN,
    f"advice.{Kind.REMOTE}": "This deletes or changes things on another machine, which can "
    "be neither checked nor undone from here. " + _BY_HAND_EN,
    f"advice.{Kind.CONFIG}": "This is a credential, a shell start-up file, a git hook or an "
    "agent tool's own settings (dshkit's guard included), and changing it affects every later "
    "run: change only this task's files in the workspace; if it must be changed, ask the "
    "person to do it themselves.",
    f"advice.{Kind.SECRET}": "This is a credential file, and reading it into the conversation "
    "hands the key to the model: read only the non-secret files the task needs (such as "
    ".env.example); if a value in it is needed, ask the person to set it in the environment "
    "themselves.",
    f"advice.{Kind.LEAK}": "This sends a credential off this machine, and once sent it cannot "
    "be taken back: never send credentials off this machine; if the service really needs one, "
    "ask the person to issue it a token of its own, or to send it themselves.",
    f"advice.{Kind.UNKNOWN}": "The strict mode runs no command whose effect cannot be seen: "
    "write paths and arguments as plain values, and inline code into a file before running "
    "it; if it must run, ask the person to run it, or to switch to the balanced mode "
    "(`dshkit guard mode balanced`, where such commands are asked about).",
    f"advice.{Kind.OPAQUE}": "The code it would actually run cannot be seen: first save what "
    "would run (the downloaded or decoded script) to a file, read it, then run that file. "
    + _BY_HAND_EN,
}

TEXTS = {ZH: ZH_TEXTS, EN: EN_TEXTS}


def say(language: str, key: str, **values: object) -> str:
    """The text of `key` in `language` ("zh" or "en"), its `{fields}` filled from `values`."""
    text = TEXTS[language][key]
    return text.format(**values) if values else text


def join(language: str, parts: list[str]) -> str:
    """Sentences as one reason: run on in Chinese, a space between them in English."""
    return ("" if language == ZH else " ").join(part for part in parts if part)


def advice(language: str, kind: str) -> str:
    """What can be done instead of a finding of `kind` (guard.policy.Kind)."""
    return TEXTS[language][f"advice.{kind}"]


def without_by_hand(language: str, text: str) -> str:
    """`text` without its closing "let the person run it" (for the person asked: it is them)."""
    return text.replace(TEXTS[language]["by_hand"], "").rstrip()


def why(language: str, said: str) -> str:
    """Why a call could not be read: the text of a `why.…` key, else `said` as it is (the
    hook dispatcher's own sentence)."""
    if said.startswith("why.") and said in TEXTS[language]:
        return TEXTS[language][said]
    return said
