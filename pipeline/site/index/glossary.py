"""Chinese names of common CS and ML terms, in English as abstracts write them: a Chinese
query also searches its English form (search.js reads this from the index's manifest).

Kept small and unambiguous: a term belongs here when a Chinese reader types it and the
English is what nearly every abstract on the subject says.
"""

from __future__ import annotations

from pipeline.config import Topic

BUILT_IN = {
    "扩散模型": "diffusion model", "大语言模型": "large language model",
    "大模型": "large language model", "语言模型": "language model",
    "强化学习": "reinforcement learning", "深度学习": "deep learning",
    "机器学习": "machine learning", "神经网络": "neural network",
    "图神经网络": "graph neural network", "卷积神经网络": "convolutional neural network",
    "注意力机制": "attention mechanism", "知识蒸馏": "knowledge distillation",
    "蒸馏": "distillation", "量化": "quantization", "剪枝": "pruning",
    "联邦学习": "federated learning", "对比学习": "contrastive learning",
    "自监督学习": "self-supervised learning", "迁移学习": "transfer learning",
    "元学习": "meta-learning", "持续学习": "continual learning",
    "多模态": "multimodal", "视觉语言模型": "vision-language model",
    "目标检测": "object detection", "语义分割": "semantic segmentation",
    "图像分割": "image segmentation", "图像生成": "image generation",
    "视频生成": "video generation", "图像分类": "image classification",
    "姿态估计": "pose estimation", "三维重建": "3D reconstruction",
    "点云": "point cloud", "自动驾驶": "autonomous driving", "机器人": "robot",
    "具身智能": "embodied", "智能体": "agent", "多智能体": "multi-agent",
    "检索增强生成": "retrieval-augmented generation", "检索增强": "retrieval-augmented",
    "知识图谱": "knowledge graph", "推荐系统": "recommender system",
    "机器翻译": "machine translation", "语音识别": "speech recognition",
    "语音合成": "speech synthesis", "文本生成": "text generation",
    "情感分析": "sentiment analysis", "问答": "question answering",
    "思维链": "chain-of-thought", "推理": "reasoning", "幻觉": "hallucination",
    "对齐": "alignment", "提示": "prompt", "微调": "fine-tuning",
    "预训练": "pre-training", "指令微调": "instruction tuning",
    "人类反馈": "human feedback", "奖励模型": "reward model",
    "对抗攻击": "adversarial attack", "对抗样本": "adversarial example",
    "隐私": "privacy", "差分隐私": "differential privacy", "可解释性": "interpretability",
    "公平性": "fairness", "鲁棒性": "robustness", "安全": "safety",
    "优化": "optimization", "图学习": "graph learning", "生成模型": "generative model",
    "生成对抗网络": "generative adversarial network", "变分自编码器": "variational autoencoder",
    "神经辐射场": "neural radiance field", "高斯泼溅": "Gaussian splatting",
    "代码生成": "code generation", "程序合成": "program synthesis",
    "形式化验证": "formal verification", "编译器": "compiler", "操作系统": "operating system",
    "分布式系统": "distributed system", "区块链": "blockchain", "密码学": "cryptography",
    "量子计算": "quantum computing", "博弈论": "game theory", "时间序列": "time series",
    "异常检测": "anomaly detection", "因果推断": "causal inference",
    "高效推理": "efficient inference", "混合专家": "mixture of experts",
    "长上下文": "long context", "状态空间模型": "state space model",
}


def glossary(topics: tuple[Topic, ...] | list[Topic]) -> dict[str, str]:
    """The built-in terms, and each configured topic's Chinese name → its English one."""
    names = {t.name.zh: t.name.en for t in topics if t.name.zh and t.name.en}
    return {**BUILT_IN, **names}
