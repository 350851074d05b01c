"""The public functions that run the __torch_function__ protocol, by namespace: the names under which
torch.overrides.get_overridable_functions() (torch 1.13) lists them, which kiln.overrides wraps where
kiln has them. Tensor methods are not listed: a Tensor subclass wraps all of them."""

TORCH = """
abs absolute acos acosh adaptive_avg_pool1d adaptive_max_pool1d add addbmm addcdiv addcmul addmm
addmv addr adjoint affine_grid_generator alias_copy all allclose alpha_dropout amax amin aminmax
angle any arccos arccosh arcsin arcsinh arctan arctan2 arctanh argmax argmin argsort argwhere
as_strided_copy as_strided_scatter asin asinh atan atan2 atanh atleast_1d atleast_2d atleast_3d
avg_pool1d baddbmm batch_norm batch_norm_backward_elemt batch_norm_backward_reduce batch_norm_elemt
batch_norm_gather_stats batch_norm_gather_stats_with_counts batch_norm_stats batch_norm_update_stats
bernoulli bilinear binary_cross_entropy_with_logits bincount binomial bitwise_and bitwise_left_shift
bitwise_not bitwise_or bitwise_right_shift bitwise_xor block_diag bmm broadcast_tensors broadcast_to
bucketize cartesian_prod cat ccol_indices_copy cdist ceil celu chain_matmul channel_shuffle cholesky
cholesky_inverse cholesky_solve choose_qparams_optimized chunk clamp clamp_max clamp_min clip clone
col_indices_copy column_stack combinations complex concat concatenate conj conj_physical
constant_pad_nd conv1d conv2d conv3d conv_tbc conv_transpose1d conv_transpose2d conv_transpose3d
convolution copysign corrcoef cos cosh cosine_embedding_loss cosine_similarity count_nonzero cov
cross crow_indices_copy ctc_loss cummax cummin cumprod cumsum cumulative_trapezoid deg2rad
dequantize det detach detach_copy diag diag_embed diagflat diagonal diagonal_copy diagonal_scatter
diff digamma dist div divide dot dropout dsmm dsplit dstack einsum embedding embedding_bag
empty_like eq equal erf erfc erfinv exp exp2 expand_copy expm1 fake_quantize_per_channel_affine
fake_quantize_per_tensor_affine fbgemm_linear_fp16_weight fbgemm_linear_fp16_weight_fp32_activation
fbgemm_linear_int8_weight fbgemm_linear_int8_weight_fp32_activation fbgemm_linear_quantize_weight
fbgemm_pack_gemm_matrix_fp16 fbgemm_pack_quantized_matrix feature_alpha_dropout feature_dropout fix
flatten flip fliplr flipud float_power floor floor_divide fmax fmin fmod frac frexp frobenius_norm
full_like fused_moving_avg_obs_fake_quant gather gcd ge geqrf ger gradient greater greater_equal
grid_sampler grid_sampler_2d grid_sampler_3d group_norm gru gru_cell gt hardshrink heaviside
hinge_embedding_loss histc histogram histogramdd hsmm hsplit hspmm hstack hypot i0 igamma igammac
imag index_add index_copy index_fill index_put index_reduce index_select indices_copy inner
instance_norm int_repr inverse is_complex is_conj is_distributed is_floating_point is_inference
is_neg is_nonzero is_same_size is_signed isclose isfinite isin isinf isnan isneginf isposinf isreal
istft kl_div kron kthvalue layer_norm lcm ldexp le lerp less less_equal lgamma lobpcg log log10
log1p log2 log_softmax logaddexp logaddexp2 logcumsumexp logdet logical_and logical_not logical_or
logical_xor logit logsumexp lstm lstm_cell lt lu lu_solve lu_unpack margin_ranking_loss masked_fill
masked_scatter masked_select matmul matrix_exp matrix_power max max_pool1d max_pool1d_with_indices
max_pool2d max_pool3d maximum mean median meshgrid min minimum miopen_batch_norm miopen_convolution
miopen_convolution_add_relu miopen_convolution_relu miopen_convolution_transpose
miopen_depthwise_convolution miopen_rnn mm mode moveaxis movedim msort mul multinomial multiply mv
mvlgamma nan_to_num nanmean nanmedian nanquantile nansum narrow narrow_copy native_batch_norm
native_channel_shuffle native_dropout native_group_norm native_layer_norm native_norm ne neg
negative nextafter nonzero norm norm_except_dim not_equal nuclear_norm numel obj ones_like orgqr
ormqr outer pairwise_distance pca_lowrank pdist permute permute_copy pinverse pixel_shuffle
pixel_unshuffle poisson poisson_nll_loss polar polygamma positive pow prelu prod put
q_per_channel_axis q_per_channel_scales q_per_channel_zero_points q_scale q_zero_point qr quantile
quantize_per_channel quantize_per_tensor quantize_per_tensor_dynamic quantized_batch_norm
quantized_gru_cell quantized_lstm_cell quantized_max_pool1d quantized_max_pool2d
quantized_rnn_relu_cell quantized_rnn_tanh_cell rad2deg rand_like randint_like randn_like ravel real
reciprocal relu remainder renorm repeat_interleave reshape resolve_conj resolve_neg rnn_relu
rnn_relu_cell rnn_tanh rnn_tanh_cell roll rot90 round row_indices_copy row_stack rrelu rsqrt rsub
saddmm scatter scatter_add scatter_reduce searchsorted segment_reduce select select_copy
select_scatter selu sgn sigmoid sign signbit sin sinc sinh slice_copy slice_scatter slogdet smm
softmax sort split split_copy split_with_sizes split_with_sizes_copy spmm sqrt square squeeze
squeeze_copy sspaddmm stack std std_mean stft sub subtract sum svd svd_lowrank swapaxes swapdims
symeig t t_copy take take_along_dim tan tanh tensor_split tensordot threshold tile topk trace
transpose transpose_copy trapezoid trapz triangular_solve tril triplet_margin_loss triu true_divide
trunc unbind unbind_copy unflatten unfold_copy unique unique_consecutive unsafe_chunk unsafe_split
unsafe_split_with_sizes unsqueeze unsqueeze_copy values_copy var var_mean vdot view_as_complex
view_as_complex_copy view_as_real view_as_real_copy view_copy vsplit vstack where xlogy zeros_like
""".split()

NN_FUNCTIONAL = """
_threshold adaptive_avg_pool1d adaptive_avg_pool2d adaptive_avg_pool3d adaptive_max_pool1d
adaptive_max_pool1d_with_indices adaptive_max_pool2d adaptive_max_pool2d_with_indices
adaptive_max_pool3d adaptive_max_pool3d_with_indices affine_grid alpha_dropout avg_pool1d avg_pool2d
avg_pool3d batch_norm bilinear binary_cross_entropy binary_cross_entropy_with_logits celu
channel_shuffle conv1d conv2d conv3d conv_tbc conv_transpose1d conv_transpose2d conv_transpose3d
cosine_embedding_loss cosine_similarity cross_entropy ctc_loss dropout dropout1d dropout2d dropout3d
elu embedding embedding_bag feature_alpha_dropout fold fractional_max_pool2d
fractional_max_pool2d_with_indices fractional_max_pool3d fractional_max_pool3d_with_indices
gaussian_nll_loss gelu glu grid_sample group_norm gumbel_softmax hardshrink hardtanh
hinge_embedding_loss huber_loss instance_norm interpolate kl_div l1_loss layer_norm leaky_relu
linear local_response_norm log_softmax logsigmoid lp_pool1d lp_pool2d margin_ranking_loss max_pool1d
max_pool1d_with_indices max_pool2d max_pool2d_with_indices max_pool3d max_pool3d_with_indices
max_unpool1d max_unpool2d max_unpool3d mish mse_loss multi_head_attention_forward multi_margin_loss
multilabel_margin_loss multilabel_soft_margin_loss native_channel_shuffle nll_loss normalize one_hot
pad pairwise_distance pdist pixel_shuffle pixel_unshuffle poisson_nll_loss prelu relu relu6 rrelu
selu silu smooth_l1_loss soft_margin_loss softmax softmin softplus softshrink softsign tanhshrink
threshold triplet_margin_loss triplet_margin_with_distance_loss unfold
""".split()

LINALG = """
cholesky cholesky_ex cond cross det diagonal eig eigh eigvals eigvalsh householder_product inv
inv_ex ldl_factor ldl_factor_ex ldl_solve lstsq lu lu_factor lu_factor_ex lu_solve matmul matrix_exp
matrix_norm matrix_power matrix_rank multi_dot norm pinv qr slogdet solve solve_ex solve_triangular
svd svdvals tensorinv tensorsolve vander vecdot vector_norm
""".split()

SPECIAL = """
airy_ai bessel_j0 bessel_j1 bessel_y0 bessel_y1 chebyshev_polynomial_t chebyshev_polynomial_u
chebyshev_polynomial_v chebyshev_polynomial_w digamma entr erf erfc erfcx erfinv exp2 expit expm1
gammainc gammaincc gammaln hermite_polynomial_h hermite_polynomial_he i0 i0e i1 i1e
laguerre_polynomial_l legendre_polynomial_p log1p log_ndtr log_softmax logit logsumexp
modified_bessel_i0 modified_bessel_i1 modified_bessel_k0 modified_bessel_k1 multigammaln ndtr ndtri
polygamma psi round scaled_modified_bessel_k0 scaled_modified_bessel_k1
shifted_chebyshev_polynomial_t shifted_chebyshev_polynomial_u shifted_chebyshev_polynomial_v
shifted_chebyshev_polynomial_w sinc softmax spherical_bessel_j0 xlog1py xlogy zeta
""".split()

FFT = """
fft fft2 fftn fftshift hfft hfft2 hfftn ifft ifft2 ifftn ifftshift ihfft ihfft2 ihfftn irfft irfft2
irfftn rfft rfft2 rfftn
""".split()
